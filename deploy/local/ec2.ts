import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './paths';
import { freePort } from '../../worker/ports';
import { retryWhenPortTaken } from './ports';
import { commandExists, ManagedProcess, waitUntil } from './process';
import { pipInstall } from './pip';
import { MissingPrerequisite, type Reporter, step } from './progress';
import { cachedTool } from './tool-cache';

/**
 * An EC2-compatible API for the aws cloud provider's tests: moto in server mode (PyPI `moto[server]`), installed
 * once into the cache with every dependency pinned, so each stack runs the same server.
 */
export const MOTO_VERSION = '5.2.5';
// The closure of moto[server]==5.2.5 as pip resolved it (2026-11); installed with --no-deps, so nothing floats.
// No hashes: binary wheels (cryptography, pydantic-core, rpds-py…) differ per platform and Python version.
const MOTO_REQUIREMENTS = `
annotated_types==0.8.0 antlr4_python3_runtime==4.13.2 attrs==26.1.0 aws_xray_sdk==2.15.0 blinker==1.9.0 boto3==1.44.8
botocore==1.44.8 certifi==2026.10.19.post1 cffi==2.1.1 cfn_lint==1.58.0 charset_normalizer==3.5.3 click==8.5.1
cryptography==50.0.2 docker==7.2.0 flask==3.1.3 flask_cors==6.0.5 graphql_core==3.3.2 idna==3.20 itsdangerous==2.2.0
jinja2==3.1.6 jmespath==1.1.0 joserfc==1.8.0 jsonpatch==1.48 jsonpath_ng==1.16.0 jsonpointer==3.12 jsonschema==4.26.0
jsonschema_path==0.5.0 jsonschema_specifications==2025.9.1 lazy_object_proxy==1.13.0 markupsafe==3.0.4 moto==${MOTO_VERSION}
mpmath==1.3.0 networkx==3.6.1 openapi_schema_validator==0.9.0 openapi_spec_validator==0.9.0 pathable==0.6.0
py_partiql_parser==0.6.3 pycparser==3.12 pydantic==2.14.4 pydantic_core==2.50.5 pydantic_settings==2.16.3
pyparsing==3.3.3 python_dateutil==2.9.0.post0 python_dotenv==1.2.4 pyyaml==6.0.4 referencing==0.37.0 regex==2026.11.19
requests==2.34.2 responses==0.26.3 rfc3339_validator==0.1.4 rpds_py==2026.9.1 s3transfer==0.19.3 six==1.17.0
sympy==1.14.0 typing_extensions==4.16.0 typing_inspection==0.4.5 urllib3==2.8.0 werkzeug==3.1.9 wrapt==2.5.2
xmltodict==1.0.4`
  .trim()
  .split(/\s+/);

/** The region the stack's clients use; moto serves any. */
export const EC2_REGION = 'us-east-1';

/** The directory to put on PYTHONPATH; installed on first use. */
export async function ensureMoto(report: Reporter): Promise<string> {
  const dir = join(cacheRoot, `moto-${MOTO_VERSION}`);
  return cachedTool(
    dir,
    async (staging) => {
      if (!(await commandExists('python3'))) {
        throw new MissingPrerequisite(
          'The EC2 test server (moto) needs Python 3 with pip.',
          'apt-get install -y python3-pip   (or set AWS_ENDPOINT_URL to an EC2-compatible endpoint)',
        );
      }
      await step(report, `install moto[server]==${MOTO_VERSION} (PyPI) into ${dir}`, () =>
        pipInstall(staging, MOTO_REQUIREMENTS, {
          step: `pip install moto[server]==${MOTO_VERSION}`,
          logFile: join(cacheRoot, 'logs', 'moto.log'),
        }),
      );
    },
    { ready: (d) => existsSync(join(d, 'moto', '__init__.py')), report },
  );
}

/** Any HTTP answer will do: the port is moto's and its WSGI app is up. */
export async function ec2Answers(endpoint: string): Promise<boolean> {
  const reply = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) });
  return reply.status > 0;
}

export interface Ec2Server {
  endpoint: string;
  region: string;
  process: ManagedProcess;
}

/** `port` 0 picks a free port; otherwise it is used when free. */
export async function startEc2(options: { stateDir: string; port: number; report: Reporter }): Promise<Ec2Server> {
  const pythonPath = await ensureMoto(options.report);
  const logFile = join(options.stateDir, 'logs', 'moto.log');
  return retryWhenPortTaken(logFile, async () => {
    const port = await freePort(options.port);
    const server = ManagedProcess.start(
      'moto',
      'python3',
      ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)],
      {
        logFile,
        env: { PYTHONPATH: pythonPath, PYTHONDONTWRITEBYTECODE: '1' },
      },
    );
    const endpoint = `http://127.0.0.1:${port}`;
    await waitUntil('EC2 test server (moto) ready', () => ec2Answers(endpoint), {
      timeoutMs: 60_000,
      intervalMs: 200,
      process: server,
    });
    return { endpoint, region: EC2_REGION, process: server };
  });
}
