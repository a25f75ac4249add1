export * from './harness.js';
export * from './jobs-client.js';
export * from './jobs-suite.js';
export * from './backends.js';
export * from './processes.js';
export * from './receiver.js';
export * from './sync-client.js';
export * from './rate-window.js';
