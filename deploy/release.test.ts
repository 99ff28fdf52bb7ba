// `npm run release` (deploy/release.ts): the chart's versions are package.json's, a release with any other is refused,
// and the chart's package is the file the release names. The image is not built here: that takes minutes and Debian's
// mirror, and deploy/image/image.stack.test.ts builds and runs it; the release adds only buildah's push to an archive.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { packageChart, releasePlan } from './release';
import { CHART_DIR, ensureHelm, runHelm } from './testing/helm';

const packageJson = readFileSync(join(__dirname, '..', 'package.json'), 'utf8');
const chartYaml = readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8');
const { version } = JSON.parse(packageJson) as { version: string };

describe('a release', () => {
  it("has package.json's version as the chart's version and appVersion", () => {
    const chart = loadYaml<{ version: string; appVersion: string }>(chartYaml);
    expect({ version: chart.version, appVersion: chart.appVersion }).toEqual({ version, appVersion: version });
    expect(releasePlan(packageJson, chartYaml, '/out')).toEqual({
      version,
      dir: '/out',
      chart: `/out/steward-${version}.tgz`,
      imageArchive: `/out/steward-${version}.oci.tar`,
      imageRef: `steward:${version}`,
    });
  });

  it('is refused when the chart says another version or appVersion, naming each', () => {
    const bumped = JSON.stringify({ version: '9.9.9' });
    expect(() => releasePlan(bumped, chartYaml)).toThrow(
      `Chart.yaml says version ${version} and appVersion ${version}, package.json version 9.9.9`,
    );
    const appAhead = chartYaml.replace(/^appVersion: .*$/m, 'appVersion: 9.9.9');
    expect(() => releasePlan(packageJson, appAhead)).toThrow(
      `Chart.yaml says appVersion 9.9.9, package.json version ${version}`,
    );
  });

  it('packages the chart as the file it names, at that version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-release-'));
    try {
      await packageChart(dir);
      const { chart } = releasePlan(packageJson, chartYaml, dir);
      expect(existsSync(chart)).toBe(true);
      const shown = loadYaml<{ version: string; appVersion: string }>(
        await runHelm(await ensureHelm(), ['show', 'chart', chart]),
      );
      expect({ version: shown.version, appVersion: shown.appVersion }).toEqual({ version, appVersion: version });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
