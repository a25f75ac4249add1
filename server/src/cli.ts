#!/usr/bin/env node
/**
 * The `opco-proxy` command's entry. The young generation's growth is held before the program's
 * modules are loaded (young-generation.ts): a static import of them would parse and compile the
 * whole module graph before this module's first line runs.
 */
import './young-generation.js';

await import('./program.js');
