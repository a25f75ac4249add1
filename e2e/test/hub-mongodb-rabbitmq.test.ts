// The hub end to end with instances on MongoDB (FerretDB in CI) and RabbitMQ, and the hub's own
// keys and journal on MongoDB.
import t from 'tap';
import { hubSuite, realBackends, realBackendsSkip } from '../src/index.js';

const skip = realBackendsSkip();
if (skip) t.test('the hub with instances on MongoDB and RabbitMQ', { skip }, async () => {});
else {
  hubSuite(t, {
    hubStore: { ...realBackends('hub').store },
    // Instances of one fleet are one publisher's deployment: one database, one queue prefix.
    instances: () => {
      const perFleet = new Map<string, ReturnType<typeof realBackends>>();
      return (fleetId) => {
        if (!perFleet.has(fleetId)) perFleet.set(fleetId, realBackends(`hub_${fleetId.replace(/-/g, '_')}`));
        return perFleet.get(fleetId)!;
      };
    },
  });
}
