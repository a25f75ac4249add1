/**
 * The sandbox's profile: the common-api profile (SPEC 4.16) plus the two routes that table
 * leaves out, so demo mode supports every route.
 */
import { correctStates, defineProfile } from '@opco-proxy/core';
import { profile as commonApi } from '@opco-proxy/adapter-common-api';

export const profile = defineProfile({
  ...commonApi,
  id: 'sandbox',
  routes: {
    ...commonApi.routes,
    'GET /cfakeyinfo': { upstream: '/v1/cfakeyinfo' },
    'GET /factures/etats': { upstream: '/v1/factures/etats', cacheTtlS: 300, response: [correctStates()] },
  },
});
