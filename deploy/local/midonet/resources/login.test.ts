/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.1 (login, tokens, MockAuthService) and §4.1 (auth in the checklist).
import { T } from '../testing/conformance';
import { emulatorForFile } from '../testing/emulator';

const h = emulatorForFile();
afterEach(() => h.admin.reset());

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('§1.1 login', () => {
  test('POST /login with Basic auth answers 200 with a Token-v1 body {key, expires} and a sessionId cookie', async () => {
    const res = await h.api.request('POST', '/login', {
      token: null,
      headers: { authorization: basic('admin', 'pw') },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain(T.token);
    expect(res.json).toEqual({ key: expect.any(String), expires: null });
    expect(res.headers.get('set-cookie')).toBe(`sessionId=${res.json.key}`);
  });

  test.each([
    ['no Authorization header', undefined],
    ['a Bearer header', 'Bearer abc'],
    ['Basic without a colon in the credentials', `Basic ${Buffer.from('nocolon').toString('base64')}`],
  ])('%s → 401 with an Error body and the upstream WWW-Authenticate challenge', async (_what, authorization) => {
    const res = await h.api.request('POST', '/login', { token: null, headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ code: 401, message: expect.any(String) });
    expect(res.headers.get('www-authenticate')).toBe('Basic  realm="BASIC_AUTH_REALM"');
  });

  test('configured credentials: a wrong password gets 401, the right one a token', async () => {
    await h.admin.configure({ credentials: { username: 'admin', password: 'right' } });
    const wrong = await h.api.request('POST', '/login', {
      token: null,
      headers: { authorization: basic('admin', 'wrong') },
    });
    expect(wrong.status).toBe(401);
    const right = await h.api.request('POST', '/login', {
      token: null,
      headers: { authorization: basic('admin', 'right') },
    });
    expect(right.status).toBe(200);
  });
});

describe('§1.1 tokens on API calls (token mode, the default)', () => {
  test.each([
    ['a missing X-Auth-Token', null],
    ['an X-Auth-Token that was never issued', 'not-a-token'],
  ])('%s → 401 with an Error body', async (_what, token) => {
    const res = await h.api.request('GET', '/bridges', { accept: T.bridges, token });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain(T.error);
    expect(res.json).toMatchObject({ code: 401 });
  });

  test('auth is checked before the method: PUT on a chain without a token is 401, not 405', async () => {
    const res = await h.api.request('PUT', '/chains/00000000-0000-4000-8000-000000000001', { token: null });
    expect(res.status).toBe(401);
  });

  test('a fresh token works; after the admin revokes tokens it gets 401 and a new login works again', async () => {
    const token = await h.api.login();
    expect((await h.api.get('/bridges', T.bridges)).status).toBe(200);
    await h.admin.revokeTokens();
    expect((await h.api.request('GET', '/bridges', { accept: T.bridges, token })).status).toBe(401);
    await h.api.login();
    expect((await h.api.get('/bridges', T.bridges)).status).toBe(200);
  });
});

describe('§1.1 MockAuthService mode', () => {
  test('any token or none is accepted, and login issues key "00000000"', async () => {
    await h.admin.configure({ auth: 'mock' });
    expect((await h.api.request('GET', '/bridges', { accept: T.bridges, token: null })).status).toBe(200);
    expect((await h.api.request('GET', '/bridges', { accept: T.bridges, token: 'whatever' })).status).toBe(200);
    const res = await h.api.request('POST', '/login', { token: null, headers: { authorization: basic('a', 'b') } });
    expect(res.json).toEqual({ key: '00000000', expires: null });
  });
});
