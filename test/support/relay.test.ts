import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type NetConnectOpts, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Relay } from './relay';

// The relay is what the stack tests' outages are made of: each mode must do to a client what it says.
let echo: Server;
let echoPort: number;
const relays: Relay[] = [];

beforeAll(async () => {
  // A cut resets the relay's connection to it too: a reset is what the relay is for here, not a failure.
  echo = createServer((socket) => socket.on('error', () => undefined).pipe(socket));
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as AddressInfo).port;
});
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

async function started(listenOn: string | number = 0): Promise<Relay> {
  const relay = new Relay(listenOn, { host: '127.0.0.1', port: echoPort });
  relays.push(relay);
  await relay.start();
  return relay;
}

function dial(to: Relay | string): NetConnectOpts {
  return typeof to === 'string' ? { path: to } : { host: '127.0.0.1', port: to.port };
}

/** Connects, or fails with the error's code. */
async function open(to: Relay | string): Promise<Socket> {
  const socket = connect(dial(to));
  await Promise.race([
    once(socket, 'connect'),
    once(socket, 'error').then(([error]) => Promise.reject(error as Error)),
  ]);
  return socket;
}

/** What comes back for `text` within `ms`: the echo, nothing (frozen), or the error that ended the connection. */
function roundTrip(socket: Socket, text: string, ms = 300): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (data) => resolve(String(data)));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    socket.once('close', () => resolve('closed'));
    setTimeout(() => resolve('nothing'), ms);
    socket.write(text);
  });
}

describe('Relay', () => {
  it('listens outside the ephemeral port range and relays', async () => {
    const relay = await started();
    expect(relay.port).toBeLessThan(32_768);
    expect(relay.address).toBe(`127.0.0.1:${relay.port}`);
    expect(await roundTrip(await open(relay), 'hello')).toBe('hello');
  });

  it('freezes a connection and resumes it intact', async () => {
    const relay = await started();
    const socket = await open(relay);
    relay.set('freeze');
    expect(await roundTrip(socket, 'held')).toBe('nothing');
    relay.set('pass');
    expect(await new Promise((resolve) => socket.once('data', (data) => resolve(String(data))))).toBe('held');
  });

  it('resets the connections it holds and those that come while cut', async () => {
    const relay = await started();
    const socket = await open(relay);
    relay.set('cut');
    expect(await roundTrip(socket, 'gone')).toMatch(/error ECONNRESET|closed/);
    const late = await open(relay).then(
      (socket) => roundTrip(socket, 'late'),
      (error: NodeJS.ErrnoException) => `error ${error.code}`,
    );
    expect(late).toMatch(/error ECONNRESET|closed/);
    relay.set('pass');
    expect(await roundTrip(await open(relay), 'back')).toBe('back');
  });

  it('refuses connections once stopped, and listens again on the same port', async () => {
    const relay = await started();
    const socket = await open(relay);
    const port = relay.port;
    await relay.stop();
    expect(await roundTrip(socket, 'gone')).toMatch(/closed|error/);
    await expect(open(relay)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await relay.start();
    expect(relay.port).toBe(port);
    expect(await roundTrip(await open(relay), 'again')).toBe('again');
  });

  it('relays a Unix socket, closes its connections when cut, and is gone when stopped', async () => {
    const path = join(tmpdir(), `relay-test-${process.pid}.sock`);
    rmSync(path, { force: true });
    const relay = await started(path);
    const socket = await open(path);
    expect(await roundTrip(socket, 'unix')).toBe('unix');
    relay.set('cut');
    expect(await roundTrip(socket, 'gone')).toMatch(/closed|error EPIPE/);
    relay.set('pass');
    expect(await roundTrip(await open(path), 'back')).toBe('back');
    await relay.stop();
    const refused = await open(path).then(
      () => 'connected',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(refused).toMatch(/ENOENT|ECONNREFUSED/);
  });
});
