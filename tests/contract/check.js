#!/usr/bin/env node
// The REST contract check: openapi.yaml against the server's route table and
// against every HTTP exchange the integration suite recorded.
//
//   node tests/contract/check.js [--log FILE] [--spec openapi.yaml]
//        [--routes gateway/api/routes.c] [--no-coverage] [--report FILE]
//
// 1. The document is validated against the official OpenAPI 3.1 schema
//    (@seriousme/openapi-schema-validator), tau.schema.json registered for
//    its external $ref, and for what client generators need
//    (tests/contract/completeness.js: no bare objects, an example for every
//    success response and problem type, examples that match their schemas,
//    operationIds and tags).
// 2. gateway/api/routes.c is parsed ({TG_M_X, "/path", ...} rows and the
//    CRUD_ROUTES macro, five operations each). Every route must be a
//    documented operation without `x-taugate-status: planned`; every
//    documented operation that is not planned must be a route.
// 3. Every exchange in the log (one JSON line each, written by
//    tests/harness/http_client.py when TAUGATE_CONTRACT_LOG is set) is
//    matched to an operation by path template and validated with Ajv
//    (JSON Schema 2020-12, the dialect of OpenAPI 3.1):
//      - the status must be documented for the operation;
//      - the response Content-Type must be a documented media type and the
//        body must match its schema (JSON, YAML, text); no body where none
//        is documented; a documented required Location header must be sent;
//      - when the server accepted the request (2xx/3xx), the request must
//        match too: path and query parameters (no undocumented query
//        parameters), the body's media type and schema. Requests the server
//        refused are expected to be invalid and are not checked;
//      - an operation that needs a token answers 401 to a request without
//        one; a public one never answers 401;
//      - exchanges on no documented path must be 404 problems, on a
//        documented path with an undocumented method 405 problems.
//    Planned operations that the server does not serve yet (404 "no
//    resource at") are accepted as such.
// 4. Coverage (unless --no-coverage): every operation that is not planned
//    was exercised at least once.
// Exit status 0 when everything holds, 1 with the reasons otherwise, 2 on
// a usage or setup error.
'use strict';

const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const { Validator } = require('@seriousme/openapi-schema-validator');
const { checkCompleteness } = require('./completeness');

const REPO = path.resolve(__dirname, '..', '..');
const DOC_ID = 'https://taugate.io/openapi.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const MAX_PER_KIND = 25; // failures printed per kind; the count is always given

function parseArgs(argv) {
  const a = {
    spec: path.join(REPO, 'openapi.yaml'),
    routes: path.join(REPO, 'gateway', 'api', 'routes.c'),
    log: null,
    coverage: true,
    report: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    if (k === '--spec') a.spec = path.resolve(next());
    else if (k === '--routes') a.routes = path.resolve(next());
    else if (k === '--log') a.log = path.resolve(next());
    else if (k === '--report') a.report = path.resolve(next());
    else if (k === '--no-coverage') a.coverage = false;
    else throw new Error(`unknown argument ${k}`);
  }
  return a;
}

// ---- the document -----------------------------------------------------------

// The external files the document's $refs name (JSON Schemas next to it):
// refs maps the file part of each ref to the parsed schema.
function externalSchemas(doc, specPath) {
  const dir = path.dirname(specPath);
  const refs = {};
  const byPath = new Map();
  (function walk(node) {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) {
      const file = node.$ref.split('#')[0];
      const abs = path.resolve(dir, file);
      if (!byPath.has(abs)) {
        const schema = JSON.parse(fs.readFileSync(abs, 'utf8'));
        if (typeof schema.$id !== 'string') throw new Error(`${file} has no $id`);
        byPath.set(abs, schema);
      }
      refs[file] = byPath.get(abs);
    }
    for (const v of Object.values(node)) walk(v);
  })(doc);
  return { refs, schemas: [...byPath.values()] };
}

// Rewrite external file refs to the $id of the schema they name, in place.
function rewriteExternalRefs(node, refs) {
  if (Array.isArray(node)) return node.forEach((n) => rewriteExternalRefs(n, refs));
  if (!node || typeof node !== 'object') return;
  if (typeof node.$ref === 'string') {
    const [file, frag] = node.$ref.split('#');
    if (file && refs[file]) node.$ref = refs[file].$id + (frag !== undefined ? `#${frag}` : '');
  }
  for (const v of Object.values(node)) rewriteExternalRefs(v, refs);
}

const ptrEscape = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const ptrUnescape = (s) => s.replace(/~1/g, '/').replace(/~0/g, '~');

function ptrGet(doc, ptr) {
  let cur = doc;
  for (const seg of ptr.split('/').slice(1)) {
    if (cur === undefined || cur === null) return undefined;
    cur = cur[ptrUnescape(seg)];
  }
  return cur;
}

// Follow a (non-schema) object's local $ref chain: returns {obj, ptr}.
function deref(doc, obj, ptr) {
  for (let n = 0; obj && typeof obj.$ref === 'string' && n < 20; n++) {
    if (!obj.$ref.startsWith('#/')) throw new Error(`cannot follow ${obj.$ref} at ${ptr}`);
    ptr = obj.$ref.slice(1);
    obj = ptrGet(doc, ptr);
  }
  return { obj, ptr };
}

// A schema's effective `type` (following $ref), for coercing parameters.
function schemaTypes(doc, schema) {
  for (let n = 0; schema && schema.$ref && n < 20; n++) {
    if (!schema.$ref.startsWith('#/')) return [];
    schema = ptrGet(doc, schema.$ref.slice(1));
  }
  if (!schema) return [];
  if (schema.type) return Array.isArray(schema.type) ? schema.type : [schema.type];
  for (const k of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(schema[k])) {
      const t = schema[k].flatMap((s) => schemaTypes(doc, s));
      if (t.length) return t;
    }
  }
  return [];
}

class Contract {
  constructor(doc, ext) {
    this.doc = doc;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    for (const s of ext.schemas) this.ajv.addSchema(s);
    const clone = JSON.parse(JSON.stringify(doc));
    rewriteExternalRefs(clone, ext.refs);
    this.ajv.addSchema(clone, DOC_ID, undefined, false);
    this.validators = new Map();
    this.ops = [];
    for (const [tpl, item] of Object.entries(doc.paths || {})) {
      const itemPtr = `/paths/${ptrEscape(tpl)}`;
      for (const m of METHODS) {
        if (!item[m]) continue;
        const op = item[m];
        const params = new Map();
        const addParams = (list, base) => (list || []).forEach((p, i) => {
          const r = deref(doc, p, `${base}/${i}`);
          params.set(`${r.obj.in}:${r.obj.name}`, { ...r, schemaPtr: `${r.ptr}/schema` });
        });
        addParams(item.parameters, `${itemPtr}/parameters`);
        addParams(op.parameters, `${itemPtr}/${m}/parameters`);
        const security = op.security !== undefined ? op.security : (doc.security || []);
        this.ops.push({
          key: `${m.toUpperCase()} ${tpl}`,
          method: m.toUpperCase(),
          template: tpl,
          ptr: `${itemPtr}/${m}`,
          op,
          params,
          planned: op['x-taugate-status'] === 'planned',
          public: security.length === 0 || security.some((s) => Object.keys(s).length === 0),
          ...compileTemplate(tpl),
        });
      }
    }
    // Prefer templates with more literal text (e.g. /runs:validate over /runs/{id}).
    this.ops.sort((a, b) => b.literal - a.literal);
  }

  validator(ptr) {
    let v = this.validators.get(ptr);
    if (!v) {
      const frag = ptr.split('/').map((s) => encodeURIComponent(s)).join('/');
      v = this.ajv.compile({ $ref: `${DOC_ID}#${frag}` });
      this.validators.set(ptr, v);
    }
    return v;
  }

  validate(ptr, value) {
    const v = this.validator(ptr);
    if (v(value)) return null;
    return v.errors.slice(0, 5).map((e) => {
      const extra = e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})`
        : e.params && e.params.unevaluatedProperty ? ` (${e.params.unevaluatedProperty})` : '';
      return `${e.instancePath || '/'} ${e.message}${extra}`;
    }).join('; ');
  }

  // Operations whose template matches the path: [{op, params}].
  match(pathname) {
    const out = [];
    for (const o of this.ops) {
      const m = o.re.exec(pathname);
      if (m) out.push({ o, pathParams: m.groups || {} });
    }
    return out;
  }
}

// "/v1/runs/{id}:cancel" -> a regex; a plain parameter never spans '/' or
// ':' (the router's rule, http/router.h).
function compileTemplate(tpl) {
  let literal = 0;
  const segs = tpl.split('/').map((seg) => seg.replace(/\{([^}]+)\}|([^{]+)/g, (all, name, lit) => {
    if (name) return `(?<${name.replace(/[^A-Za-z0-9_]/g, '_')}>[^/:]+)`;
    literal += lit.length;
    return lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }));
  return { re: new RegExp(`^${segs.join('/')}$`), literal };
}

// ---- routes.c ---------------------------------------------------------------

function parseRoutes(file) {
  const text = fs.readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\/\/[^\n]*/g, ' ')
    .replace(/\\\n/g, ' ');
  const body = text.replace(/#define[^\n]*/g, ' ');
  const routes = [];
  const row = /\{\s*TG_M_([A-Z]+)\s*,\s*"([^"]+)"/g;
  let m;
  while ((m = row.exec(body))) routes.push(`${m[1]} ${m[2]}`);
  const crud = /CRUD_ROUTES\s*\(\s*"([^"]+)"\s*,\s*"([^"]+)"/g;
  while ((m = crud.exec(body))) {
    routes.push(`GET ${m[1]}`, `POST ${m[1]}`, `GET ${m[2]}`, `PATCH ${m[2]}`, `DELETE ${m[2]}`);
  }
  if (!routes.length) throw new Error(`no routes found in ${file}`);
  return routes;
}

// ---- exchanges --------------------------------------------------------------

const baseType = (ct) => (ct || '').split(';')[0].trim().toLowerCase();
const isJsonType = (t) => t === 'application/json' || /\+json$/.test(t);

function bodyText(b) {
  if (!b) return '';
  if (b.text !== undefined) return b.text;
  if (b.base64 !== undefined) return Buffer.from(b.base64, 'base64').toString('latin1');
  return '';
}
const bodySize = (b) => (b ? b.size || 0 : 0);

// Parse a multipart/form-data body into {name: text}.
function parseMultipart(ct, b) {
  const m = /boundary="?([^";]+)"?/i.exec(ct || '');
  if (!m) throw new Error('no boundary');
  const raw = b.base64 !== undefined ? Buffer.from(b.base64, 'base64') : Buffer.from(b.text || '', 'utf8');
  const text = raw.toString('latin1');
  const out = {};
  for (const part of text.split(`--${m[1]}`).slice(1)) {
    if (part.startsWith('--')) break;
    const end = part.indexOf('\r\n\r\n');
    if (end < 0) throw new Error('a part has no header end');
    const hdrs = part.slice(0, end);
    const content = part.slice(end + 4).replace(/\r\n$/, '');
    const name = /filename="([^"]*)"/i.exec(hdrs) || /name="([^"]*)"/i.exec(hdrs);
    if (!name) throw new Error('a part has no name');
    const isSpec = /[\s;]name="spec"/i.test(hdrs);
    out[isSpec ? 'spec' : name[1]] = Buffer.from(content, 'latin1').toString('utf8');
  }
  return out;
}

function decodeBody(mediaType, ct, b) {
  const t = bodyText(b);
  if (isJsonType(mediaType)) return JSON.parse(t);
  if (mediaType === 'application/yaml' || mediaType === 'application/x-yaml' || mediaType === 'text/yaml') {
    return yaml.load(t);
  }
  if (mediaType === 'multipart/form-data') return parseMultipart(ct, b);
  return t;
}

// A parameter's text as the value its schema describes. An array in a
// query with style form and explode false (the default style for a query
// is form, explode true) is comma-separated: ids=a,b,c.
function coerceParam(doc, param, value) {
  const types = schemaTypes(doc, param.schema);
  if (types.includes('array') && param.explode === false && (param.style || 'form') === 'form') {
    let items = param.schema.items;
    for (let n = 0; items && items.$ref && n < 20; n++) items = ptrGet(doc, items.$ref.slice(1));
    return value.split(',').map((v) => coerce(doc, items || {}, v));
  }
  return coerce(doc, param.schema, value);
}

function coerce(doc, schema, value) {
  const types = schemaTypes(doc, schema);
  if (types.includes('integer') && /^-?\d+$/.test(value)) return Number(value);
  if (types.includes('number') && value !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function checkRequest(c, o, pathParams, url, ex, fail) {
  const doc = c.doc;
  // parameters
  for (const [k, p] of o.params) {
    const [where, name] = k.split(':');
    let raw;
    if (where === 'path') raw = pathParams[name.replace(/[^A-Za-z0-9_]/g, '_')];
    else if (where === 'query') raw = url.searchParams.has(name) ? url.searchParams.get(name) : undefined;
    else continue; // headers and cookies are not recorded
    if (raw === undefined) {
      if (p.obj.required) fail('request', `missing required ${where} parameter ${name}`);
      continue;
    }
    if (where === 'path') raw = decodeURIComponent(raw);
    const err = c.validate(p.schemaPtr, coerceParam(doc, p.obj, raw));
    if (err) fail('request', `${where} parameter ${name}=${JSON.stringify(raw)}: ${err}`);
  }
  for (const name of new Set(url.searchParams.keys())) {
    if (!o.params.has(`query:${name}`)) fail('request', `undocumented query parameter ${name}`);
  }
  // body
  const rb = ex.request && ex.request.body;
  const hasBody = bodySize(rb) > 0;
  const rbDef = o.op.requestBody && deref(doc, o.op.requestBody, `${o.ptr}/requestBody`);
  if (!rbDef) {
    if (hasBody) fail('request', 'a body was sent and accepted, but the operation documents none');
    return;
  }
  if (!hasBody) {
    if (rbDef.obj.required) fail('request', 'the operation requires a body; none was sent');
    return;
  }
  const types = Object.keys(rbDef.obj.content || {});
  let ct = ex.request.content_type;
  let mt = baseType(ct);
  if (!mt && types.length === 1) mt = types[0];
  if (!types.includes(mt)) {
    fail('request', `request Content-Type ${ct || '(none)'} is not documented (${types.join(', ')})`);
    return;
  }
  if (rb.truncated) return;
  let value;
  try {
    value = decodeBody(mt, ct, rb);
  } catch (e) {
    fail('request', `the accepted ${mt} body does not parse: ${e.message}`);
    return;
  }
  const err = c.validate(`${rbDef.ptr}/content/${ptrEscape(mt)}/schema`, value);
  if (err) fail('request', `body (${mt}): ${err}`);
}

function checkResponse(c, o, ex, fail) {
  const doc = c.doc;
  const status = String(ex.status);
  const responses = o.op.responses || {};
  const key = responses[status] ? status : responses[`${status[0]}XX`] ? `${status[0]}XX`
    : responses.default ? 'default' : null;
  if (!key) {
    fail('status', `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
    return;
  }
  const r = deref(doc, responses[key], `${o.ptr}/responses/${ptrEscape(key)}`);
  const headers = r.obj.headers || {};
  if (headers.Location) {
    const h = deref(doc, headers.Location, `${r.ptr}/headers/Location`).obj;
    if (h.required && !ex.response.location) fail('response', 'the Location header is missing');
  }
  if (ex.method === 'HEAD') return;
  const body = ex.response.body;
  const content = r.obj.content || {};
  const types = Object.keys(content);
  if (!types.length) {
    if (bodySize(body) > 0) fail('response', `a ${status} answer documents no body, but one was sent`);
    return;
  }
  const ct = ex.response.content_type;
  const mt = baseType(ct);
  if (!types.includes(mt)) {
    fail('response', `Content-Type ${ct || '(none)'} is not documented for ${status} (${types.join(', ')})`);
    return;
  }
  if (body && body.truncated) return;
  let value;
  try {
    value = decodeBody(mt, ct, body);
  } catch (e) {
    fail('response', `the ${mt} body does not parse: ${e.message}`);
    return;
  }
  const err = c.validate(`${r.ptr}/content/${ptrEscape(mt)}/schema`, value);
  if (err) fail('response', `body (${status} ${mt}): ${err}`);
}

function isProblem(c, ex, status) {
  if (ex.status !== status || baseType(ex.response.content_type) !== 'application/problem+json') return false;
  try {
    return c.validate('/components/schemas/Problem', JSON.parse(bodyText(ex.response.body))) === null;
  } catch (e) {
    return false;
  }
}

function notServedYet(ex) {
  if (ex.status !== 404) return false;
  try {
    return /^no resource at /.test(JSON.parse(bodyText(ex.response.body)).detail || '');
  } catch (e) {
    return false;
  }
}

function checkExchanges(c, exchanges, failures, stats) {
  const gatewayBases = new Set(exchanges.filter((e) => e.response && e.response.request_id).map((e) => e.base));
  exchanges.forEach((ex, i) => {
    const where = `#${i + 1} ${ex.method} ${ex.path} -> ${ex.status}`;
    if (!gatewayBases.has(ex.base)) {
      stats.foreign++;
      return;
    }
    stats.checked++;
    let opKey = null;
    const fail = (kind, msg) => failures.push({ kind, where, msg, op: opKey });
    if (!ex.response.request_id) fail('response', 'the X-Request-Id header is missing');
    const url = new URL(ex.path, 'http://x');
    const method = ex.method === 'HEAD' ? 'GET' : ex.method;
    const matches = c.match(url.pathname);
    if (ex.method === 'OPTIONS') {
      // the server answers OPTIONS on every path itself (Allow, or a CORS
      // preflight: gateway/http/cors.h): 204 without a body on a documented
      // path, a 403 problem for an origin it does not allow, a 404 problem
      // elsewhere
      const ok = matches.length === 0 ? isProblem(c, ex, 404)
        : (ex.status === 204 && bodySize(ex.response.body) === 0) || isProblem(c, ex, 403);
      if (!ok) fail('options', 'OPTIONS must answer 204 (or a 403 problem) on a documented path, a 404 problem elsewhere');
      stats.unrouted++;
      return;
    }
    const m = matches.find((x) => x.o.method === method);
    if (!m) {
      if (matches.length === 0) {
        if (!isProblem(c, ex, 404)) fail('unrouted', 'no documented path matches; the answer must be a 404 problem');
        else stats.unrouted++;
      } else if (!isProblem(c, ex, 405)) {
        fail('unrouted', `the method is not documented for ${matches[0].o.template}; the answer must be a 405 problem`);
      } else {
        stats.unrouted++;
      }
      return;
    }
    const o = m.o;
    opKey = o.key;
    if (o.planned && notServedYet(ex)) {
      stats.plannedNotServed++;
      return;
    }
    const rec = stats.ops.get(o.key) || { count: 0, statuses: new Set() };
    rec.count++;
    rec.statuses.add(ex.status);
    stats.ops.set(o.key, rec);
    const authz = ex.request && ex.request.authorization;
    if (!o.public && authz === false && ex.status !== 401 && ex.status !== 413) {
      fail('security', `${o.key} needs a token, but a request without one got ${ex.status} (want 401)`);
    }
    if (o.public && ex.status === 401) fail('security', `${o.key} is public but answered 401`);
    checkResponse(c, o, ex, fail);
    if (ex.status < 400) checkRequest(c, o, m.pathParams, url, ex, fail);
  });
}

// ---- main -------------------------------------------------------------------

async function main(argv) {
  let args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    console.error(`check.js: ${e.message}`);
    return 2;
  }
  const failures = [];
  const notes = [];
  const specText = fs.readFileSync(args.spec, 'utf8');
  const doc = yaml.load(specText);
  const ext = externalSchemas(doc, args.spec);

  // 1. the document itself
  const v = new Validator({ strict: false });
  for (const [ref, schema] of Object.entries(ext.refs)) await v.addSpecRef(JSON.parse(JSON.stringify(schema)), ref);
  const res = await v.validate(JSON.parse(JSON.stringify(doc)));
  if (!res.valid) {
    const errs = Array.isArray(res.errors) ? res.errors.slice(0, 10).map((e) => `${e.instancePath} ${e.message}`) : [String(res.errors)];
    for (const e of errs) failures.push({ kind: 'document', where: path.relative(REPO, args.spec), msg: e });
  }
  const c = new Contract(doc, ext);
  const documented = new Map(c.ops.map((o) => [o.key, o]));
  for (const f of checkCompleteness(doc, c, REPO, ptrGet)) failures.push({ kind: 'completeness', ...f });

  // 2. routes.c against the document
  const routes = parseRoutes(args.routes);
  const routeSet = new Set(routes);
  for (const r of routes) {
    const o = documented.get(r);
    if (!o) failures.push({ kind: 'routes', where: r, op: r, msg: 'served by the gateway (routes.c) but missing from openapi.yaml' });
    else if (o.planned) failures.push({ kind: 'routes', where: r, op: r, msg: 'served now (routes.c): remove `x-taugate-status: planned` and exercise it in a test' });
  }
  for (const o of c.ops) {
    if (!o.planned && !routeSet.has(o.key)) {
      failures.push({ kind: 'routes', where: o.key, op: o.key, msg: 'documented (not planned) but not in routes.c; mark it `x-taugate-status: planned` or add the route' });
    }
  }

  // 3. exchanges
  const stats = { checked: 0, foreign: 0, unrouted: 0, plannedNotServed: 0, ops: new Map() };
  if (args.log) {
    const lines = fs.existsSync(args.log) ? fs.readFileSync(args.log, 'utf8').split('\n').filter(Boolean) : [];
    const exchanges = [];
    lines.forEach((l, i) => {
      try {
        exchanges.push(JSON.parse(l));
      } catch (e) {
        failures.push({ kind: 'log', where: `${args.log}:${i + 1}`, msg: `not JSON: ${e.message}` });
      }
    });
    checkExchanges(c, exchanges, failures, stats);
    // 4. coverage
    const never = c.ops.filter((o) => !o.planned && !stats.ops.has(o.key));
    if (args.coverage) {
      for (const o of never) failures.push({ kind: 'coverage', where: o.key, op: o.key, msg: 'never exercised by the integration suite' });
    } else if (never.length) {
      notes.push(`coverage not enforced: ${never.length} operations not exercised in this (partial) session`);
    }
    const noSuccess = c.ops.filter((o) => stats.ops.has(o.key) && ![...stats.ops.get(o.key).statuses].some((s) => s < 300));
    if (noSuccess.length) notes.push(`exercised only with error answers: ${noSuccess.map((o) => o.key).join(', ')}`);
  }

  // report
  const planned = c.ops.filter((o) => o.planned).map((o) => o.key);
  console.log(`openapi.yaml: ${c.ops.length} operations (${planned.length} planned), routes.c: ${routes.length} routes`);
  if (args.log) {
    console.log(`exchanges: ${stats.checked} checked, ${stats.unrouted} on no operation (404/405), ` +
      `${stats.plannedNotServed} on planned operations not served yet, ${stats.foreign} to other servers; ` +
      `${stats.ops.size} operations exercised`);
  }
  for (const n of notes) console.log(`note: ${n}`);
  // One line per distinct problem (kind, operation or path, message), with
  // how many exchanges showed it and the first of them.
  const grouped = new Map();
  for (const f of failures) {
    const k = `${f.kind}\u0000${f.op || ''}\u0000${f.msg}`;
    const g = grouped.get(k);
    if (g) g.count++;
    else grouped.set(k, { ...f, count: 1 });
  }
  const byKind = new Map();
  for (const g of grouped.values()) {
    if (!byKind.has(g.kind)) byKind.set(g.kind, []);
    byKind.get(g.kind).push(g);
  }
  for (const [kind, list] of byKind) {
    const n = list.reduce((a, g) => a + g.count, 0);
    console.log(`FAIL ${kind}: ${n} (${list.length} distinct)`);
    for (const g of list.slice(0, MAX_PER_KIND)) {
      console.log(`  ${g.op ? `${g.op}: ` : ''}${g.msg}`);
      if (g.where !== g.op) console.log(`      ${g.count > 1 ? `${g.count}x, first ` : ''}${g.where}`);
    }
    if (list.length > MAX_PER_KIND) console.log(`  ... and ${list.length - MAX_PER_KIND} more`);
  }
  if (args.report) {
    fs.writeFileSync(args.report, JSON.stringify({
      operations: c.ops.length,
      planned,
      routes,
      exercised: Object.fromEntries([...stats.ops].map(([k, r]) => [k, { count: r.count, statuses: [...r.statuses].sort() }])),
      failures,
      notes,
    }, null, 2));
  }
  console.log(failures.length ? `contract check failed (${failures.length} problems)` : 'contract check passed');
  return failures.length ? 1 : 0;
}

main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; }, (e) => {
  console.error(`check.js: ${e.stack || e.message}`);
  process.exitCode = 2;
});
