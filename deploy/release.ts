// `npm run release`: what a release publishes, made by one command into one folder, dist/release/: the chart as
// `helm package` makes it (steward-<version>.tgz) and the image as an OCI archive (steward-<version>.oci.tar, which
// `podman load` and `skopeo copy oci-archive:…` take), with a SHA256SUMS of both. Everything carries package.json's
// version: the chart's version and appVersion must equal it, or nothing is made, so the image tag the chart defaults
// to (its appVersion) is the one packed.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { buildImage } from './image/build';
import { cacheRoot, repoRoot } from './local/paths';
import { runLogged } from './local/process';
import { type Reporter, stderrReporter, step } from './local/progress';
import { CHART_DIR, ensureHelm, runHelm } from './testing/helm';

export const RELEASE_DIR = join(repoRoot, 'dist', 'release');

export interface ReleasePlan {
  version: string;
  dir: string;
  /** The file `helm package` names steward-<version>.tgz. */
  chart: string;
  /** The image archive, and the name it carries (what `podman load` calls it: the chart's default repository). */
  imageArchive: string;
  imageRef: string;
}

/** What a release of these files makes, or why there can be none: versions that disagree. */
export function releasePlan(
  packageJson = readFileSync(join(repoRoot, 'package.json'), 'utf8'),
  chartYaml = readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8'),
  outDir = RELEASE_DIR,
): ReleasePlan {
  const { version } = JSON.parse(packageJson) as { version: string };
  const chart = loadYaml<{ name: string; version: string; appVersion: string }>(chartYaml);
  const differ = (['version', 'appVersion'] as const).filter((field) => String(chart[field]) !== version);
  if (differ.length > 0) {
    const said = differ.map((field) => `${field} ${chart[field]}`).join(' and ');
    throw new Error(`Chart.yaml says ${said}, package.json version ${version}: set them equal, then release`);
  }
  return {
    version,
    dir: outDir,
    chart: join(outDir, `${chart.name}-${version}.tgz`),
    imageArchive: join(outDir, `steward-${version}.oci.tar`),
    imageRef: `steward:${version}`,
  };
}

/** The chart, linted as CI lints it (a chart helm refuses is no release), then packaged into `outDir`. */
export async function packageChart(outDir: string): Promise<void> {
  const helm = await ensureHelm();
  await runHelm(helm, ['lint', '--strict', CHART_DIR]);
  await runHelm(helm, ['package', CHART_DIR, '--destination', outDir]);
}

async function makeRelease(plan: ReleasePlan, report: Reporter): Promise<string[]> {
  // One release in the folder: files of an earlier version would be taken for this one's.
  rmSync(plan.dir, { recursive: true, force: true });
  mkdirSync(plan.dir, { recursive: true });
  await step(report, `helm package ${relative(repoRoot, CHART_DIR)}`, () => packageChart(plan.dir));
  const image = await buildImage(report);
  await step(report, `buildah push ${image} to ${basename(plan.imageArchive)}`, () =>
    runLogged('buildah', ['push', image, `oci-archive:${plan.imageArchive}:${plan.imageRef}`], {
      step: 'buildah push oci-archive',
      logFile: join(cacheRoot, 'logs', 'release.log'),
    }),
  );
  const made = [plan.chart, plan.imageArchive];
  const sums = made.map(
    (file) => `${createHash('sha256').update(readFileSync(file)).digest('hex')}  ${basename(file)}`,
  );
  writeFileSync(join(plan.dir, 'SHA256SUMS'), `${sums.join('\n')}\n`);
  return [...made, join(plan.dir, 'SHA256SUMS')];
}

if (require.main === module) {
  (async () => {
    const plan = releasePlan();
    const made = await makeRelease(plan, stderrReporter);
    process.stdout.write(`Steward ${plan.version}:\n`);
    for (const file of made) {
      const { size } = statSync(file);
      const shown = size >= 1e6 ? `${(size / 1e6).toFixed(1)} MB` : `${Math.ceil(size / 1e3)} kB`;
      process.stdout.write(`  ${relative(process.cwd(), file)} (${shown})\n`);
    }
  })().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
