export * from './leased-records.js';
export * from './retry-policy.js';
export * from './periodic-task.js';
export * from './tenant-slots.js';
/** A record collection's pages, newest first (the list routes of jobs, syncs, webhooks, deliveries). */
export { newestFirst, type Page, type PageRequest } from '../store/newest-first.js';
