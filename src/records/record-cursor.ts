import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { cursorNotIssued } from '../errors/cursor-not-issued.js';
import type { RecordPosition } from './decision-record-store-type.js';

/** First byte of a cursor: the format (`r1` and `r2` were readable text: `r2:<page seq>:<slot>`). */
const VERSION = 3;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** page (8 bytes, big-endian) and slot (4 bytes). */
const PLAIN_BYTES = 12;
const CURSOR_BYTES = 1 + IV_BYTES + PLAIN_BYTES + TAG_BYTES;

/**
 * The opaque `cursor` of record lists: a place in a scenario's newest-first order (the stored page and the
 * slot on it of the last record looked at), encrypted and authenticated (AES-256-GCM) for the scenario it
 * was issued for.
 *
 * Why: a page's number is the table's global insertion counter (`decision_record_pages.seq`), shared by every
 * tenant; a readable cursor (`r2:<seq>:<slot>`) told a tenant how many pages all tenants stored between two of
 * its own lists, and a forged one let it probe positions. Encrypted, a cursor reveals nothing; authenticated,
 * with the scenario id as associated data, a forged, altered or another scenario's cursor is 400 naming
 * `query.cursor`, and so are the readable `r2` cursors of before (a list is started again).
 * The key is derived from RECORDS_MASKING_SECRET (already required in production and staging, and the
 * same in every process of a deployment, so any process reads the cursors of any other); a new secret
 * invalidates the cursors in flight, which costs a client one restarted list.
 */
export class RecordCursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('decision-record list cursors, format 3').digest();
  }

  encode(scenarioId: number, position: RecordPosition): string {
    const plain = Buffer.alloc(PLAIN_BYTES);
    plain.writeBigUInt64BE(BigInt(position.page), 0);
    plain.writeUInt32BE(position.slot, 8);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(associatedData(scenarioId));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /** The place a cursor names; 400 naming `query.cursor` for one this service did not issue for this scenario. */
  decode(scenarioId: number, cursor: string): RecordPosition {
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length !== CURSOR_BYTES || bytes[0] !== VERSION) throw cursorNotIssued();
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const sealed = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + PLAIN_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(associatedData(scenarioId));
    decipher.setAuthTag(bytes.subarray(CURSOR_BYTES - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(sealed), decipher.final()]);
    } catch {
      throw cursorNotIssued();
    }
    const page = Number(plain.readBigUInt64BE(0));
    if (!Number.isSafeInteger(page)) throw cursorNotIssued();
    return { page, slot: plain.readUInt32BE(8) };
  }
}

function associatedData(scenarioId: number): Buffer {
  return Buffer.from(`scenario:${scenarioId}`, 'utf8');
}
