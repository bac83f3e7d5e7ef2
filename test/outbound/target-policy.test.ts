import { describe, expect, it } from '@jest/globals';
import { TargetPolicy } from '../../src/outbound/target-policy.js';

describe('TargetPolicy', () => {
  const resolve = async (host: string) => ({ 'public.example': ['93.184.216.34'], 'mixed.example': ['93.184.216.34', '10.0.0.5'], 'internal.corp': ['10.1.2.3'] }[host] ?? []);

  it.each([
    ['http://127.0.0.1/', 'loopback'], ['http://10.0.0.1/', 'private'], ['http://169.254.169.254/', 'link-local'],
    ['http://[fd00::1]/', 'unique-local'], ['http://224.0.0.1/', 'multicast'], ['http://0.0.0.0/', 'unspecified'],
    ['http://[::1]/', 'IPv6 loopback'], ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'], ['http://mixed.example/', 'a host with one private address'],
  ])('refuses %s (%s)', async (url) => {
    await expect(new TargetPolicy({ resolve }).check(url)).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
  });

  it('allows public addresses, and private ones only when listed by host or CIDR', async () => {
    await expect(new TargetPolicy({ resolve }).check('https://public.example/a')).resolves.toEqual(['93.184.216.34']);
    await expect(new TargetPolicy({ resolve, allowPrivate: ['internal.corp'] }).check('http://internal.corp/')).resolves.toEqual(['10.1.2.3']);
    await expect(new TargetPolicy({ resolve, allowPrivate: ['10.0.0.0/8'] }).check('http://internal.corp/')).resolves.toEqual(['10.1.2.3']);
  });

  it('restricts hosts to the allow-list patterns and schemes to http(s)', async () => {
    const policy = new TargetPolicy({ resolve, allowedHosts: ['*.example'] });
    await expect(policy.check('https://public.example/')).resolves.toBeDefined();
    await expect(policy.check('https://example/')).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED' });
    await expect(policy.check('https://internal.corp/')).rejects.toMatchObject({ message: expect.stringContaining('allow-list') });
    await expect(policy.check('file:///etc/passwd')).rejects.toMatchObject({ message: expect.stringContaining('scheme') });
  });
});
