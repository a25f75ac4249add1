export { BUNDLED, applicationModules } from './bundle.js';
export { CONFIG_PARTS, DEFAULT_PLUGINS } from './config-parts.js';
export { runRole, runHubRole, type RoleOptions } from './process-roles.js';
export { checkConfigFile, type ConfigReport } from './config-check.js';
export { startDemoUpstream } from './demo.js';
