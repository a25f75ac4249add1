export * from './leased-records.js';
export * from './retry-policy.js';
export * from './periodic-task.js';
export * from './tenant-slots.js';
