// The hub killed (SIGKILL) and restarted, instances on MongoDB (FerretDB in CI) and RabbitMQ, the
// hub's keys and journal on MongoDB.
import t from 'tap';
import { hubOutageSuite, realBackends, realBackendsSkip } from '../src/index.js';

const skip = realBackendsSkip();
if (skip) t.test('the hub outage with instances on MongoDB and RabbitMQ', { skip }, async () => {});
else {
  hubOutageSuite(t, {
    hubStore: { ...realBackends('hub_outage').store },
    instances: () => {
      const perFleet = new Map<string, ReturnType<typeof realBackends>>();
      return (fleetId) => {
        if (!perFleet.has(fleetId)) perFleet.set(fleetId, realBackends(`hub_${fleetId.replace(/-/g, '_')}`));
        return perFleet.get(fleetId)!;
      };
    },
  });
}
