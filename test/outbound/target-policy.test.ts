import { describe, expect, it } from '@jest/globals';
import { TargetPolicy } from '../../src/outbound/target-policy.js';

describe('TargetPolicy', () => {
  const resolve = async (host: string) =>
    ({
      'public.example': ['93.184.216.34'],
      'mixed.example': ['93.184.216.34', '10.0.0.5'],
      'internal.corp': ['10.1.2.3'],
    })[host] ?? [];

  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://10.0.0.1/', 'private'],
    ['http://169.254.169.254/', 'link-local'],
    ['http://[fd00::1]/', 'unique-local'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://[::1]/', 'IPv6 loopback'],
    ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
    ['http://mixed.example/', 'a host with one private address'],
  ])('refuses %s (%s)', async (url) => {
    await expect(new TargetPolicy({ resolve }).check(url)).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
  });

  it('allows public addresses, and private ones only when listed by host or CIDR', async () => {
    await expect(new TargetPolicy({ resolve }).check('https://public.example/a')).resolves.toEqual(['93.184.216.34']);
    await expect(
      new TargetPolicy({ resolve, allowPrivate: ['internal.corp'] }).check('http://internal.corp/'),
    ).resolves.toEqual(['10.1.2.3']);
    await expect(
      new TargetPolicy({ resolve, allowPrivate: ['10.0.0.0/8'] }).check('http://internal.corp/'),
    ).resolves.toEqual(['10.1.2.3']);
  });

  it('restricts hosts to the allow-list patterns and schemes to http(s)', async () => {
    const policy = new TargetPolicy({ resolve, allowedHosts: ['*.example'] });
    await expect(policy.check('https://public.example/')).resolves.toBeDefined();
    await expect(policy.check('https://example/')).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
    await expect(policy.check('https://internal.corp/')).rejects.toMatchObject({
      message: expect.stringContaining('allow-list'),
    });
    await expect(policy.check('file:///etc/passwd')).rejects.toMatchObject({
      message: expect.stringContaining('scheme'),
    });
  });
});

describe('TargetPolicy and IPv6 addresses that embed an IPv4 address', () => {
  const policy = new TargetPolicy();

  it.each([
    ['http://[::127.0.0.1]:8080/', 'IPv4-compatible loopback'],
    ['http://[::7f00:1]/', 'IPv4-compatible loopback, hex'],
    ['http://[::10.0.0.1]/', 'IPv4-compatible private'],
    ['http://[::ffff:7f00:1]/', 'IPv4-mapped loopback, hex'],
    ['http://[::ffff:a9fe:a9fe]/', 'IPv4-mapped link-local (metadata), hex'],
    ['http://[::ffff:0:127.0.0.1]/', 'IPv4-translated (SIIT) loopback'],
    ['http://[64:ff9b::127.0.0.1]/', 'NAT64 well-known prefix, loopback'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'NAT64 well-known prefix, metadata'],
    ['http://[64:ff9b:1::10.1.2.3]/', 'NAT64 local-use prefix, private (/96 layout)'],
    ['http://[64:ff9b:1:7f00:0:100::]/', 'NAT64 local-use prefix, loopback (/48 layout)'],
    ['http://[2002:7f00:1::]/', '6to4 of loopback'],
    ['http://[2002:c0a8:101::1]/', '6to4 of 192.168.1.1'],
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'Teredo with a loopback client'],
    ['http://[2001:0:a00:1:8000:63bf:a247:27dd]/', 'Teredo with a private server'],
  ])('refuses %s (%s)', async (url) => {
    await expect(policy.check(url)).rejects.toMatchObject({
      code: 'HTTP_TARGET_REFUSED',
      message: expect.stringContaining('not a public address'),
    });
  });

  it('refuses a host whose DNS answer is an IPv4-compatible loopback address, in any notation', async () => {
    for (const address of ['::127.0.0.1', '::7f00:1', '0:0:0:0:0:0:7f00:1']) {
      await expect(
        new TargetPolicy({ resolve: async () => [address] }).check('http://sneaky.example/'),
      ).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
    }
  });

  it('allows embedded public IPv4 addresses', async () => {
    for (const url of [
      'http://[::ffff:93.184.216.34]/',
      'http://[64:ff9b::93.184.216.34]/',
      'http://[2002:5db8:d822::1]/',
    ]) {
      await expect(policy.check(url)).resolves.toHaveLength(1);
    }
  });

  it('extends an allow-listed IPv4 address to its IPv4-mapped form only', async () => {
    const allowing = new TargetPolicy({ allowPrivate: ['127.0.0.1/32'] });
    await expect(allowing.check('http://[::ffff:127.0.0.1]/')).resolves.toHaveLength(1);
    await expect(allowing.check('http://[::127.0.0.1]/')).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
    await expect(allowing.check('http://[64:ff9b::127.0.0.1]/')).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
  });
});
