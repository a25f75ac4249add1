export * from './admission.js';
export * from './fair-queue.js';
export * from './local-bucket.js';
