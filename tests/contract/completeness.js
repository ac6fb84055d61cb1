// What a client generator needs from the contract beyond validity, checked
// by tests/contract/check.js:
//   - every schema that is an object says its shape (properties, a map's
//     additionalProperties, or a composition): no bare `type: object`;
//   - every success response has an example, and every example (of a
//     response, a request, a parameter or a schema) matches its schema;
//   - every problem type the gateway can answer (gateway/core/status.c and
//     each tg_problem_typed call) has an example problem in the document;
//   - operationIds are unique camelCase words, and each operation is tagged
//     with declared tags.
'use strict';

const fs = require('fs');
const path = require('path');

const SHAPE = ['properties', 'additionalProperties', 'patternProperties', 'allOf', 'oneOf', 'anyOf',
  '$ref', 'unevaluatedProperties', 'const', 'enum', 'propertyNames'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['allOf', 'oneOf', 'anyOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'unevaluatedProperties', 'not', 'contains',
  'contentSchema', 'if', 'then', 'else', 'propertyNames'];
const PROBLEM_BASE = 'https://taugate.dev/problems/';

const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

// Every schema object under `schema` (at JSON pointer `ptr`): fn(schema, ptr).
function walkSchema(schema, ptr, fn) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return;
  fn(schema, ptr);
  for (const k of SUBSCHEMA_MAPS) {
    for (const [n, s] of Object.entries(schema[k] || {})) walkSchema(s, `${ptr}/${k}/${esc(n)}`, fn);
  }
  for (const k of SUBSCHEMA_LISTS) (schema[k] || []).forEach((s, i) => walkSchema(s, `${ptr}/${k}/${i}`, fn));
  for (const k of SUBSCHEMAS) if (schema[k] && typeof schema[k] === 'object') walkSchema(schema[k], `${ptr}/${k}`, fn);
}

// Every schema of the document, with its pointer: components, parameters,
// headers, bodies and responses (inline or not).
function allSchemas(doc) {
  const out = [];
  const add = (s, ptr) => walkSchema(s, ptr, (x, p) => out.push([x, p]));
  const media = (content, ptr) => {
    for (const [mt, m] of Object.entries(content || {})) if (m.schema) add(m.schema, `${ptr}/content/${esc(mt)}/schema`);
  };
  const comps = doc.components || {};
  for (const [n, s] of Object.entries(comps.schemas || {})) add(s, `/components/schemas/${esc(n)}`);
  for (const kind of ['parameters', 'headers']) {
    for (const [n, p] of Object.entries(comps[kind] || {})) if (p.schema) add(p.schema, `/components/${kind}/${esc(n)}/schema`);
  }
  for (const kind of ['requestBodies', 'responses']) {
    for (const [n, r] of Object.entries(comps[kind] || {})) media(r.content, `/components/${kind}/${esc(n)}`);
  }
  for (const [tpl, item] of Object.entries(doc.paths || {})) {
    const ip = `/paths/${esc(tpl)}`;
    (item.parameters || []).forEach((p, i) => p.schema && add(p.schema, `${ip}/parameters/${i}/schema`));
    for (const [m, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const op_ = `${ip}/${m}`;
      (op.parameters || []).forEach((p, i) => p.schema && add(p.schema, `${op_}/parameters/${i}/schema`));
      if (op.requestBody && op.requestBody.content) media(op.requestBody.content, `${op_}/requestBody`);
      for (const [st, r] of Object.entries(op.responses)) if (r.content) media(r.content, `${op_}/responses/${st}`);
    }
  }
  return out;
}

function typesOf(s) {
  return Array.isArray(s.type) ? s.type : (s.type ? [s.type] : []);
}

// Problem slugs the gateway answers with, read from its sources.
function problemSlugs(repo) {
  const slugs = new Set();
  const status = fs.readFileSync(path.join(repo, 'gateway', 'core', 'status.c'), 'utf8');
  for (const m of status.matchAll(/\{\s*\d{3},\s*"([a-z-]+)",/g)) if (m[1] !== 'ok') slugs.add(m[1]);
  const dir = path.join(repo, 'gateway');
  for (const sub of fs.readdirSync(dir)) {
    const d = path.join(dir, sub);
    if (!fs.statSync(d).isDirectory()) continue;
    for (const f of fs.readdirSync(d).filter((x) => x.endsWith('.c'))) {
      const text = fs.readFileSync(path.join(d, f), 'utf8');
      for (const m of text.matchAll(/tg_problem_typed\([^,]+,\s*[A-Z_]+,\s*"([a-z-]+)"/g)) slugs.add(m[1]);
    }
  }
  return slugs;
}

// Every example value in the document (to find the problem types shown).
function exampleValues(node, out) {
  if (Array.isArray(node)) return node.forEach((n) => exampleValues(n, out));
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    if (k === 'example') out.push(v);
    else if (k === 'examples' && Array.isArray(v)) out.push(...v);
    else if (k === 'examples' && v && typeof v === 'object') {
      for (const e of Object.values(v)) if (e && 'value' in e) out.push(e.value);
    }
    exampleValues(v, out);
  }
}

function hasExample(doc, media, deref) {
  if (media.example !== undefined || (media.examples && Object.keys(media.examples).length)) return true;
  let s = media.schema;
  for (let n = 0; s && s.$ref && n < 20; n++) s = deref(s.$ref);
  if (!s) return false;
  if (s.example !== undefined || (Array.isArray(s.examples) && s.examples.length)) return true;
  // a composition whose every branch shows an example
  const branches = s.oneOf || s.anyOf;
  return Array.isArray(branches) && branches.length > 0 && branches.every((b) => hasExample(doc, { schema: b }, deref));
}

// The failures: [{where, msg}]. `c` is check.js's Contract (its validate).
function checkCompleteness(doc, c, repo, ptrGet) {
  const fails = [];
  const deref = (ref) => (ref.startsWith('#/') ? ptrGet(doc, ref.slice(1)) : null);

  // bare objects
  for (const [s, ptr] of allSchemas(doc)) {
    if (typesOf(s).includes('object') && !SHAPE.some((k) => k in s)) {
      fails.push({ where: ptr, msg: 'a bare `type: object`: name its properties, or its values with additionalProperties' });
    }
    // schema-level examples match their schema
    const exs = [...(s.example !== undefined ? [s.example] : []), ...(Array.isArray(s.examples) ? s.examples : [])];
    exs.forEach((e, i) => {
      const err = c.validate(ptr, e);
      if (err) fails.push({ where: `${ptr} example ${i}`, msg: `the example does not match its schema: ${err}` });
    });
  }

  // responses, bodies and parameters: examples present (2xx) and valid
  for (const o of c.ops) {
    for (const [st, r0] of Object.entries(o.op.responses || {})) {
      let r = r0;
      let rptr = `${o.ptr}/responses/${st}`;
      if (r.$ref) { rptr = r.$ref.slice(1); r = deref(r.$ref); }
      for (const [mt, m] of Object.entries((r && r.content) || {})) {
        const mptr = `${rptr}/content/${esc(mt)}`;
        if (/^2/.test(st) && !hasExample(doc, m, deref)) {
          fails.push({ where: `${o.key} ${st} ${mt}`, msg: 'a success response without an example' });
        }
        if (m.example !== undefined && mt.includes('json')) {
          const err = c.validate(`${mptr}/schema`, m.example);
          if (err) fails.push({ where: `${o.key} ${st} ${mt}`, msg: `the example does not match the schema: ${err}` });
        }
      }
    }
    let rb = o.op.requestBody;
    let rbptr = `${o.ptr}/requestBody`;
    if (rb && rb.$ref) { rbptr = rb.$ref.slice(1); rb = deref(rb.$ref); }
    for (const [mt, m] of Object.entries((rb && rb.content) || {})) {
      if (m.example !== undefined && mt === 'application/json') {
        const err = c.validate(`${rbptr}/content/${esc(mt)}/schema`, m.example);
        if (err) fails.push({ where: `${o.key} request ${mt}`, msg: `the example does not match the schema: ${err}` });
      }
    }
    for (const p of o.params.values()) {
      if (p.obj.example !== undefined && p.obj.in !== 'header') {
        const err = c.validate(p.schemaPtr, p.obj.example);
        if (err) fails.push({ where: `${o.key} parameter ${p.obj.name}`, msg: `the example does not match the schema: ${err}` });
      }
    }
  }

  // problem types
  const shown = new Set();
  const values = [];
  exampleValues(doc, values);
  for (const v of values) {
    if (v && typeof v === 'object' && typeof v.type === 'string' && v.type.startsWith(PROBLEM_BASE)) {
      shown.add(v.type.slice(PROBLEM_BASE.length));
    }
  }
  for (const slug of problemSlugs(repo)) {
    if (!shown.has(slug)) fails.push({ where: `problem type ${slug}`, msg: 'answered by the gateway, but no example in openapi.yaml shows it' });
  }

  // operationIds and tags
  const declared = new Set((doc.tags || []).map((t) => t.name));
  const seen = new Set();
  for (const o of c.ops) {
    const id = o.op.operationId;
    if (!/^[a-z][a-zA-Z0-9]*$/.test(id || '')) fails.push({ where: o.key, msg: `operationId ${id} is not a camelCase word` });
    if (seen.has(id)) fails.push({ where: o.key, msg: `operationId ${id} is used twice` });
    seen.add(id);
    if (!Array.isArray(o.op.tags) || !o.op.tags.length) fails.push({ where: o.key, msg: 'no tag' });
    for (const t of o.op.tags || []) if (!declared.has(t)) fails.push({ where: o.key, msg: `tag ${t} is not declared` });
  }
  return fails;
}

module.exports = { checkCompleteness };
