import { profile } from './profile.js';

export { profile };
export * from './server/index.js';
export default { profile };
