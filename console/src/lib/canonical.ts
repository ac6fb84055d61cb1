// jansson's canonical JSON (JSON_COMPACT | JSON_SORT_KEYS, reals as %.17g),
// so the browser can recompute the hashes and check the signature the
// gateway made (docs/evidence.md). Numbers keep their source text: an
// integer and a real with the same value hash differently.

/** A JSON number as it appeared in the text. */
export class Num {
  constructor(readonly lex: string) {}
}
export type JVal = null | boolean | string | Num | JVal[] | { [k: string]: JVal };

/** Parse JSON keeping each number's source text (JSON.parse would turn 3.0 into 3). */
export function parseExact(text: string): JVal {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`JSON: ${what} at position ${i}`);
  };
  const value = (): JVal => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o: { [k: string]: JVal } = {};
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail("':'");
        o[k] = value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === '}') return o;
        else fail("',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const a: JVal[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === ']') return a;
        else fail("',' or ']'");
      }
    }
    if (c === '"') return str();
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m && m[0]) {
      i += m[0].length;
      return new Num(m[0]);
    }
    for (const [w, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(w, i)) {
        i += w.length;
        return v;
      }
    }
    return fail('a value');
  };
  const str = (): string => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string; // the escapes, as JSON says
  };
  const v = value();
  ws();
  if (i !== text.length) fail('the end');
  return v;
}

function escapeString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20) out += s[i];
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
  }
  return out + '"';
}

/** The exact decimal value of a finite double: digits and the power of ten of the last one. */
function exactDecimal(x: number): { digits: string; exp10: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e2 = biased - 1075;
  if (biased === 0) e2 = -1074;
  else mant |= 1n << 52n;
  if (e2 >= 0) return { digits: (mant << BigInt(e2)).toString(), exp10: 0 };
  // m / 2^k = m * 5^k / 10^k
  return { digits: (mant * 5n ** BigInt(-e2)).toString(), exp10: e2 };
}

/** C's %.17g (round half to even on the exact value, as glibc does) as jansson writes a real: ".0" added to a bare integer, exponent without '+' or leading zeros. */
export function formatReal(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const P = 17;
  let { digits, exp10 } = exactDecimal(x);
  digits = digits.replace(/^0+/, '');
  if (digits.length > P) {
    const rest = digits.slice(P);
    let head = BigInt(digits.slice(0, P));
    const half = rest[0]! > '5' || (rest[0] === '5' && /[1-9]/.test(rest.slice(1))) || (rest[0] === '5' && !/[1-9]/.test(rest.slice(1)) && head % 2n === 1n);
    if (half) head += 1n;
    exp10 += rest.length;
    digits = head.toString();
    if (digits.length > P) {
      digits = digits.slice(0, P);
      exp10 += 1;
    }
  }
  // The decimal exponent of the first significant digit, as %e would print it.
  const e = exp10 + digits.length - 1;
  const sig = digits.replace(/0+$/, '') || '0';
  let s: string;
  if (e < -4 || e >= P) {
    s = sig[0]! + (sig.length > 1 ? '.' + sig.slice(1) : '') + 'e' + (e < 0 ? '-' : '') + Math.abs(e);
  } else if (e >= 0) {
    const int = sig.length > e + 1 ? sig.slice(0, e + 1) : sig + '0'.repeat(e + 1 - sig.length);
    const frac = sig.length > e + 1 ? sig.slice(e + 1) : '';
    s = int + (frac ? '.' + frac : '');
  } else {
    s = '0.' + '0'.repeat(-e - 1) + sig;
  }
  if (x < 0) s = '-' + s;
  if (!s.includes('.') && !s.includes('e')) s += '.0';
  return s;
}

const utf8 = new TextEncoder();

function compareUtf8(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

export function canonical(v: JVal): string {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return escapeString(v);
  if (v instanceof Num) return /^-?\d+$/.test(v.lex) ? String(BigInt(v.lex)) : formatReal(Number(v.lex));
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  const keys = Object.keys(v).sort(compareUtf8);
  return '{' + keys.map((k) => escapeString(k) + ':' + canonical(v[k]!)).join(',') + '}';
}

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? utf8.encode(data) : data;
  const d = await crypto.subtle.digest('SHA-256', bytes as BufferSource);
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export interface ChainResult {
  ok: boolean;
  events: number;
  /** The seq of the first event whose link or hash does not hold. */
  brokenAt?: number;
  head?: string;
}

/** Recompute each event's hash: sha256(prev_hash + "\n" + canonical {run_id, seq, at, state, reason, message, source, data}). */
export async function checkChain(runId: string, events: JVal[]): Promise<ChainResult> {
  let prev: string | null = null;
  for (const raw of events) {
    const e = raw as { [k: string]: JVal };
    const seq = e['seq'] instanceof Num ? Number((e['seq'] as Num).lex) : -1;
    const body: JVal = {
      run_id: runId,
      seq: e['seq'] ?? null,
      at: e['at'] ?? null,
      state: e['state'] ?? null,
      reason: e['reason'] ?? null,
      message: e['message'] ?? null,
      source: e['source'] ?? '',
      data: e['data'] ?? {},
    };
    const want = await sha256Hex((prev ?? '') + '\n' + canonical(body));
    if ((e['prev_hash'] ?? null) !== prev || e['hash'] !== want) return { ok: false, events: events.length, brokenAt: seq };
    prev = want;
  }
  return { ok: true, events: events.length, head: prev ?? '' };
}

function b64decode(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export interface EvidenceCheck {
  digest: boolean;
  signature: boolean;
  keyMatches: boolean;
  chain: ChainResult | null;
  verified: boolean;
  why?: string;
}

/** Check a sealed record: sha256 of the canonical bytes, the Ed25519 signature with the gateway's public key, and the history's chain. */
export async function verifyEvidence(
  ev: { canonical: string; sha256: string; signature: string; key_id: string; run_id: string },
  key: { key_id: string; public_key_b64: string },
): Promise<EvidenceCheck> {
  const bytes = utf8.encode(ev.canonical);
  const digest = (await sha256Hex(bytes)) === ev.sha256;
  const keyMatches = ev.key_id === key.key_id;
  let signature = false;
  let why: string | undefined;
  try {
    const k = await crypto.subtle.importKey('raw', b64decode(key.public_key_b64) as BufferSource, { name: 'Ed25519' }, false, ['verify']);
    signature = await crypto.subtle.verify({ name: 'Ed25519' }, k, b64decode(ev.signature) as BufferSource, bytes as BufferSource);
  } catch (e) {
    why = `the browser could not check an Ed25519 signature (${String(e)})`;
  }
  let chain: ChainResult | null = null;
  try {
    const rec = parseExact(ev.canonical) as { [k: string]: JVal };
    const hist = rec['history'];
    chain = Array.isArray(hist) ? await checkChain(ev.run_id, hist) : null;
  } catch (e) {
    why = `the record is not JSON (${String(e)})`;
  }
  const verified = digest && signature && keyMatches && (chain?.ok ?? false);
  if (!why && !verified)
    why = !digest ? 'the record does not match its sha256' : !keyMatches ? `signed by key ${ev.key_id}, not the gateway's current key ${key.key_id}` : !signature ? 'the signature does not match the record' : 'the history in the record is not an intact chain';
  return { digest, signature, keyMatches, chain, verified, ...(why ? { why } : {}) };
}
