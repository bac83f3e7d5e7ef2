import { describe, expect, it } from '@jest/globals';
import { InputMasker } from '../../src/records/input-masking.js';
import { chain, input } from '../engine/support/scenario-builder.js';

/** Which inputs are masked, and how (docs/records.md, "Personal data"). */

const document = chain(
  [
    { ...input('ssn', 'STRING'), tags: ['Pii'] },
    { ...input('address', 'MAP'), tags: ['contact', 'PII'] },
    { ...input('age', 'INTEGER'), tags: ['demographic'] },
    { ...input('piiNot', 'STRING'), tags: ['not-pii', 'piiish'] },
    input('income', 'DOUBLE'),
  ],
  [],
);

describe('InputMasker', () => {
  const masker = new InputMasker('secret-one');

  it('masks the inputs tagged pii, in any case, and no others', () => {
    expect(masker.piiInputs(document)).toEqual(['ssn', 'address']);
  });

  it('replaces a whole value, whatever its type, with a keyed hash; equal values give equal masks', () => {
    const inputs = { ssn: '123', address: { city: 'Bern', zip: 3000 }, age: 40, income: 10.5 };
    const { inputs: masked, masked: names } = masker.maskInputs(inputs, ['ssn', 'address']);
    expect(names).toEqual(['ssn', 'address']);
    expect(masked).toEqual({
      ssn: expect.stringMatching(/^pii:[0-9a-f]{32}$/),
      address: expect.stringMatching(/^pii:[0-9a-f]{32}$/),
      age: 40,
      income: 10.5,
    });
    expect(masker.maskInputs({ ssn: '123' }, ['ssn']).inputs.ssn).toBe(masked.ssn);
    expect(inputs.ssn).toBe('123');
  });

  it('tells the string "1" from the number 1, and depends on the secret', () => {
    expect(masker.mask('1')).not.toBe(masker.mask(1));
    expect(new InputMasker('secret-two').mask('123')).not.toBe(masker.mask('123'));
  });

  it('masks what trace entries read or wrote under a masked name', () => {
    const trace = [
      {
        nodeId: 'start',
        name: 'start',
        type: 'START' as const,
        read: {},
        wrote: { ssn: '123', age: 40 },
        durationMicros: 1,
      },
    ];
    expect(masker.maskTrace(trace, ['ssn'])[0].wrote).toEqual({ ssn: masker.mask('123'), age: 40 });
  });

  it("masks a masked input's value wherever else the trace holds it: equal, inside a text, or a whole MAP; short values only by name", () => {
    const inputs = { ssn: '123-45-6789', address: { city: 'Bern' }, age: 40 };
    const trace = [
      {
        nodeId: 'call',
        name: 'call',
        type: 'SCENARIO_CALL' as const,
        read: { scenario: 'inner', inputs: { id: '123-45-6789', where: { city: 'Bern' }, years: 40 } },
        wrote: { greeting: 'hello 123-45-6789!' },
        durationMicros: 1,
      },
    ];
    const [entry] = masker.maskTrace(trace, ['ssn', 'address', 'age'], inputs);
    expect(entry.read).toEqual({
      scenario: 'inner',
      inputs: { id: masker.mask('123-45-6789'), where: masker.mask({ city: 'Bern' }), years: 40 },
    });
    expect(entry.wrote).toEqual({ greeting: `hello ${masker.mask('123-45-6789')}!` });
  });

  it("masks the values of masked inputs in an error's message and its violations' messages", () => {
    const error = {
      code: 'INVALID_INPUT',
      message: 'ssn 123-45-6789 is not valid',
      violations: [{ variable: 'ssn', message: 'unknown number 123-45-6789' }],
    };
    const masked = masker.maskError(error, ['ssn'], { ssn: '123-45-6789' });
    expect(JSON.stringify(masked)).not.toContain('123-45-6789');
    expect(masked.message).toBe(`ssn ${masker.mask('123-45-6789')} is not valid`);
    expect(error.message).toBe('ssn 123-45-6789 is not valid');
  });

  describe('finds a masked value in a message however it was written', () => {
    const email = 'john.very.long.email.address.secret@example.com';
    const card = { number: '4111111111111111', cvv: '123', holder: { name: 'Jane Q Public' } };
    const inputs = { email, card, quoted: 'ja"ne@example.com', spaced: 'jane doe+x@example.com' };
    const names = ['email', 'card', 'quoted', 'spaced'];
    const scrubbed = (message: string) => masker.maskError({ code: 'SCRIPT_ERROR', message }, names, inputs).message;

    it('cut as the input checks quote a value (40 characters of JSON, then …), in a callee that does not tag it pii', () => {
      const quoted = `n: must be an integer, got string ${JSON.stringify(email).slice(0, 40)}…`;
      expect(scrubbed(quoted)).not.toContain(email.slice(0, 20));
    });

    it('a MAP as its JSON text, and each of its strings and numbers alone', () => {
      expect(scrubbed(`bad card ${JSON.stringify(card)}`)).toBe(`bad card ${masker.mask(card)}`);
      expect(scrubbed('no such card 4111111111111111')).toBe(`no such card ${masker.mask('4111111111111111')}`);
      expect(scrubbed('holder Jane Q Public')).not.toContain('Jane Q Public');
      // 123 is too short to mask wherever it appears (MIN_MATCH_CHARS).
      expect(scrubbed('cvv 123')).toBe('cvv 123');
    });

    it('JSON-escaped, and URL-encoded (percent and form encoding)', () => {
      expect(scrubbed(`bad ${JSON.stringify(inputs.quoted)}`)).not.toContain('ne@example.com');
      expect(scrubbed(`refused https://x.example/?e=${encodeURIComponent(inputs.spaced)}`)).not.toContain(
        'example.com',
      );
      expect(scrubbed(`refused https://x.example/?${new URLSearchParams({ e: inputs.spaced })}`)).not.toContain(
        'example.com',
      );
    });

    it("in the trace too: a MAP's leaf copied under another name", () => {
      const trace = masker.maskTrace(
        [
          {
            nodeId: 's',
            nodeName: 's',
            nodeType: 'SCRIPT',
            read: {},
            wrote: { inner: card.number, copy: card },
          } as never,
        ],
        names,
        inputs,
      );
      expect(JSON.stringify(trace)).not.toContain('4111111111111111');
    });
  });
});
