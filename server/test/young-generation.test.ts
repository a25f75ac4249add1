// Idle memory (issue 40): the CLI's first import holds V8's young generation at its smallest while
// the modules load, and the role lets it grow once it serves. Each case runs in a process of its
// own (the hold is process-wide), on the Node running the tests: on Node 20, 22 and 24 alike the
// flag must take effect at run time, or the hold silently does nothing.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const holdModule = fileURLToPath(new URL('../src/young-generation.js', import.meta.url));

/** The young generation's size (MiB) after an allocation burst whose objects live on, as start-up's do. */
function youngAfterBurst(script: string, nodeArgs: string[] = []): number {
  const burst = `
    const v8 = await import('node:v8');
    const kept = [];
    for (let i = 0; i < 400000; i++) kept.push({ i, text: 'x' + i });
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    console.log(young.space_size / 1048576);
  `;
  return Number(
    execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', `${script}\n${burst}`], {
      encoding: 'utf8',
    }).trim(),
  );
}

t.test('without the hold, a burst that lives on grows the young generation', async (t) => {
  const grown = youngAfterBurst('');
  t.ok(grown >= 16, `${grown} MiB`);
});

t.test('imported first, the module holds the young generation at its smallest through the burst', async (t) => {
  const held = youngAfterBurst(`await import(${JSON.stringify(holdModule)});`);
  t.ok(held < 8, `${held} MiB`);
});

t.test('released, the young generation grows with the load again', async (t) => {
  const released = youngAfterBurst(
    `const { releaseYoungGeneration } = await import(${JSON.stringify(holdModule)}); releaseYoungGeneration();`,
  );
  t.ok(released >= 16, `${released} MiB`);
});

t.test("an operator's own semi-space flag is left alone", async (t) => {
  const own = youngAfterBurst(`await import(${JSON.stringify(holdModule)});`, ['--semi-space-growth-factor=2']);
  t.ok(own >= 16, `${own} MiB: the hold did not apply`);
});
