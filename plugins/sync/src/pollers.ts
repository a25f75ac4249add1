/**
 * Pollers (D21): after a sync with `enablePoller`, every `pollingIntervalMs` a poller reads what
 * changed upstream since its last successful poll, compares it with the tenant's snapshots and
 * emits dossier.etat_changed, dossier.updated and facture.etat_changed. A poll is claimed with
 * its next date moved forward in one atomic write, so two workers never run the same poll.
 */
import {
  asServiceError,
  sha256Hex,
  type Clock,
  type Collection,
  type Logger,
  type PluginApi,
  type Sealed,
  type Sealer,
  type Store,
  type Tenant,
} from '@opco-proxy/core';
import { LeasedRecords, unleased, type Claimed, type NextRun, type Leased } from '@opco-proxy/core/durable';
import type { Poller } from '@opco-proxy/schemas';
import { allFactures, etatsPages, liste, type EtatItem, type ReadDeps } from './upstream-reads.js';
import { contentHash, type Snapshots } from './snapshots.js';

export interface PollerRecord extends Leased {
  tenant: string;
  opcoId: string;
  apiKey: Sealed;
  intervalMs: number;
  status: 'active';
  /** False until the first poll recorded the invoices as they are (no event for what was already there). */
  baselined: boolean;
  lastPollAt: Date;
  /** When the next poll is due (the kit's `nextAttemptAt`, shown as `nextPollAt`). */
  lastError: string | null;
  createdAt: Date;
}

export interface PollerDeps extends ReadDeps {
  snapshots: Snapshots;
  emit: PluginApi['emit'];
  log: Logger;
  clock: Clock;
  sealer: Sealer;
  leaseMs: number;
}

export class Pollers {
  private readonly pollers: Collection<PollerRecord>;
  private readonly leases: LeasedRecords<PollerRecord>;

  constructor(
    store: Store,
    private readonly deps: PollerDeps,
    owner: string,
  ) {
    this.pollers = store.collection<PollerRecord>('pollers');
    this.leases = new LeasedRecords(this.pollers, deps.clock, owner);
  }

  async prepare(): Promise<void> {
    await this.pollers.createIndex({ tenant: 1 });
    await this.pollers.createIndex({ status: 1, nextAttemptAt: 1 });
  }

  /** Starts (or restarts with a fresh key) the poller of a tenant and opcoId, reading from `since`. */
  async start(tenant: Tenant, opcoId: string, since: Date): Promise<void> {
    const _id = pollerId(tenant.hash, opcoId);
    const intervalMs = this.deps.opcos.get(opcoId).pollingIntervalMs;
    const now = this.deps.clock.now();
    await this.pollers.findOneAndUpdate(
      { _id },
      {
        $set: {
          apiKey: this.deps.sealer.seal(tenant.apiKey, _id),
          intervalMs,
          status: 'active',
          nextAttemptAt: new Date(now + intervalMs),
        },
        $setOnInsert: {
          tenant: tenant.hash,
          opcoId,
          baselined: false,
          lastPollAt: since,
          lastError: null,
          createdAt: new Date(now),
          ...unleased(),
        },
      },
      { upsert: true },
    );
  }

  list(tenant: string): Promise<PollerRecord[]> {
    return this.pollers.find({ tenant }, { sort: { opcoId: 1 } });
  }

  /** Every tenant's pollers, for operators (P9). */
  listAll(limit: number): Promise<PollerRecord[]> {
    return this.pollers.find({}, { sort: { opcoId: 1, createdAt: 1 }, limit });
  }

  async stop(tenant: string, opcoId: string): Promise<boolean> {
    return (await this.pollers.deleteOne({ _id: pollerId(tenant, opcoId), tenant })) === 1;
  }

  /**
   * The pollers' periodic task: runs every poll that is due, then answers when the next one is,
   * so that an idle worker reads the store then, and not once a tick (issue 11: an idle worker
   * does not poll the store). It waits `minMs` at least (a poll due now is another process's,
   * in progress) and `maxMs` at most: a poller started by another process is seen within it.
   */
  async tick(minMs: number, maxMs: number): Promise<NextRun> {
    await this.runDue();
    const [next] = await this.pollers.find({ status: 'active' }, { sort: { nextAttemptAt: 1 }, limit: 1 });
    const waitMs = next ? next.nextAttemptAt.getTime() - this.deps.clock.now() : maxMs;
    return { nextRunInMs: Math.min(maxMs, Math.max(minMs, waitMs)) };
  }

  /** Runs every poll that is due, one after the other; returns how many ran. */
  async runDue(): Promise<number> {
    let ran = 0;
    for (let poller = await this.claimDue(); poller; poller = await this.claimDue()) {
      await this.run(poller);
      ran += 1;
    }
    return ran;
  }

  /** The earliest due poll, leased, its next date moved one interval on in the same write as its end. */
  private claimDue(): Promise<Claimed<PollerRecord> | null> {
    return this.leases.claim({ status: 'active' }, this.deps.leaseMs, { sort: { nextAttemptAt: 1 } });
  }

  private async run({ record: poller, token }: Claimed<PollerRecord>): Promise<void> {
    const startedAt = this.deps.clock.date();
    const nextAttemptAt = new Date(startedAt.getTime() + poller.intervalMs);
    try {
      const tenant = {
        hash: poller.tenant,
        apiKey: this.deps.sealer.unseal(poller.apiKey, poller._id).toString('utf8'),
      };
      await this.leases.hold(poller._id, token, this.deps.leaseMs, async () => {
        await this.pollDossiers(poller, tenant);
        await this.pollFactures(poller, tenant);
      });
      await this.leases.release(poller._id, token, {
        lastPollAt: startedAt,
        baselined: true,
        lastError: null,
        nextAttemptAt,
      });
    } catch (err) {
      const message = asServiceError(err).message;
      this.deps.log.warn(
        { opcoId: poller.opcoId, error: message },
        'poll failed; the next one starts from the last successful poll',
      );
      await this.leases.release(poller._id, token, { lastError: message, nextAttemptAt });
    }
  }

  private async pollDossiers(poller: PollerRecord, tenant: Tenant): Promise<void> {
    const { snapshots } = this.deps;
    const moved: EtatItem[] = [];
    for await (const page of etatsPages(this.deps, poller.opcoId, tenant, {
      dateModification: isoDate(poller.lastPollAt),
    })) {
      for (const item of page.items) {
        const key = String(item.numeroInterne);
        const snapshot = await snapshots.get(poller.tenant, poller.opcoId, 'dossier', key);
        if (!snapshot || snapshot.etat !== (item.etat ?? null)) {
          await this.emit(poller, 'dossier.etat_changed', {
            numeroInterne: key,
            numeroExterne: item.numeroExterne ?? null,
            numeroDeca: item.numeroDeca ?? null,
            previousEtat: snapshot?.etat ?? null,
            etat: item.etat ?? null,
          });
          await snapshots.put(poller.tenant, poller.opcoId, 'dossier', key, { etat: item.etat ?? null });
        }
        moved.push(item);
      }
    }
    // Listed as modified: fetch the content and tell when it really changed.
    const batchSize = this.deps.opcos.get(poller.opcoId).profile.sync.batchSize;
    for (let i = 0; i < moved.length; i += batchSize) {
      const dossiers = await liste(
        this.deps,
        poller.opcoId,
        tenant,
        moved.slice(i, i + batchSize).map((item) => String(item.numeroInterne)),
      );
      for (const dossier of dossiers) {
        const key = String(dossier.numeroInterne);
        const hash = contentHash(dossier);
        const snapshot = await snapshots.get(poller.tenant, poller.opcoId, 'dossier', key);
        if (snapshot?.hash === hash) continue;
        if (snapshot?.hash) await this.emit(poller, 'dossier.updated', { numeroInterne: key, dossier });
        await snapshots.put(poller.tenant, poller.opcoId, 'dossier', key, { hash });
      }
    }
  }

  private async pollFactures(poller: PollerRecord, tenant: Tenant): Promise<void> {
    if (!this.deps.opcos.get(poller.opcoId).profile.routes['GET /factures/etats']) return;
    const query: Record<string, string> = poller.baselined ? { dateModification: isoDate(poller.lastPollAt) } : {};
    for (const facture of await allFactures(this.deps, poller.opcoId, tenant, query)) {
      const key = String(facture.numeroInterneFacture);
      const snapshot = await this.deps.snapshots.get(poller.tenant, poller.opcoId, 'facture', key);
      const etat = (facture.etatFacture as string | undefined) ?? null;
      if (snapshot?.etat === etat) continue;
      if (poller.baselined) {
        await this.emit(poller, 'facture.etat_changed', {
          numeroInterneFacture: key,
          referenceFactureCFA: facture.referenceFactureCFA ?? null,
          previousEtat: snapshot?.etat ?? null,
          etat,
          montantFacture: facture.montantFacture ?? null,
          referenceVirement: facture.referenceVirement ?? null,
          dateReglement: facture.dateReglement ?? null,
        });
      }
      await this.deps.snapshots.put(poller.tenant, poller.opcoId, 'facture', key, { etat });
    }
  }

  private emit(
    poller: PollerRecord,
    type: 'dossier.etat_changed' | 'dossier.updated' | 'facture.etat_changed',
    data: Record<string, unknown>,
  ): Promise<void> {
    return this.deps.emit({ type, tenant: poller.tenant, opcoId: poller.opcoId, data });
  }
}

export function pollerId(tenant: string, opcoId: string): string {
  return sha256Hex(`poller\n${tenant}\n${opcoId}`);
}

/** The upstream filters on a date: a poll re-reads the whole day of its last success. */
function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function toPollerResource(poller: PollerRecord): Poller {
  return {
    opcoId: poller.opcoId,
    status: poller.status,
    intervalMs: poller.intervalMs,
    lastPollAt: poller.lastPollAt.toISOString(),
    nextPollAt: poller.nextAttemptAt.toISOString(),
    lastError: poller.lastError,
    createdAt: poller.createdAt.toISOString(),
  };
}
