/**
 * What a plugin's or a driver's tests build on (`@opco-proxy/core/testing`): the injectable clock,
 * a poll for what happens asynchronously, a TCP relay to cut a backend's connections, a recording
 * HTTP server to stand for an upstream or a receiver. A driver's contract suites are
 * `@opco-proxy/core/store-contract` and `/queue-contract`.
 */
export { TestClock } from '../clock.js';
export { eventually } from './eventually.js';
export * from './tcp-relay.js';
export * from './recording-server.js';
