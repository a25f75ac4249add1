export * from './auth-strategy.js';
export * from './oauth-client-credentials.js';
export * from './api-key-header.js';
