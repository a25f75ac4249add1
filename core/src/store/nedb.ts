/**
 * nedb, loaded the way it is published. Its typings declare an ES default export but the package
 * is CommonJS, so under NodeNext the types and the runtime value disagree; requiring it gives the
 * class itself, typed here from those same typings.
 */
import { createRequire } from 'node:module';
import type NedbModule from '@seald-io/nedb';

const require = createRequire(import.meta.url);

export type Datastore = InstanceType<typeof NedbModule.default>;
export const Datastore = require('@seald-io/nedb') as typeof NedbModule.default;

/** nedb's own update engine ($set, $unset, $inc, $push on dotted paths), absent from its typings. */
export const nedbModel = require('@seald-io/nedb/lib/model.js') as {
  modify(doc: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown>;
};
