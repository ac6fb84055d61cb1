#!/usr/bin/env node
// Validate rendered Kubernetes manifests against the real schemas in
// $TAUGATE_SHARED/k8s-schemas (default: ../shared next to the repository),
// with a third-party JSON Schema validator (ajv), as reference/k8s-api.md
// section 7 describes:
//   - batch/v1 Job:  kubernetes-v1.32/apis__batch__v1_openapi.json
//   - core/v1 objects (Service, and ObjectMeta of CRs): kubernetes-v1.32/api__v1_openapi.json
//   - ray.io/v1 RayJob: kuberay-v1.7.0/ray.io_rayjobs.yaml, version v1 openAPIV3Schema
// Built-in schemas are not closed, so every object schema that lists
// properties is closed here (additionalProperties: false), the way
// fieldValidation=Strict would reject unknown fields. x-kubernetes-int-or-string
// becomes integer-or-string; CRD defaults are applied before `required`.
// On top of the schemas it checks what admission adds and the schemas cannot
// say: names and label syntax, extended resources requested == limited, env
// and volume consistency, Kueue's Job and RayJob webhook rules.
//
// Usage: node validate-manifests.js FILE...   (each a manifest or an array)
// Exit status 0 when every manifest is valid; 1 otherwise, with reasons.
'use strict';

const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');
const yaml = require('js-yaml');

const repo = path.resolve(__dirname, '..', '..');
const shared = process.env.TAUGATE_SHARED || path.join(path.dirname(repo), 'shared');
const schemaDir = path.join(shared, 'k8s-schemas');

function readJson(p) {
  return JSON.parse(fs.readFileSync(p, 'utf8'));
}

// Close object schemas and translate Kubernetes extensions, in place.
function prepare(node) {
  if (Array.isArray(node)) {
    node.forEach(prepare);
    return node;
  }
  if (!node || typeof node !== 'object') return node;
  if (node['x-kubernetes-int-or-string'] === true) {
    delete node.type;
    node.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (node.properties && node.additionalProperties === undefined &&
      !node['x-kubernetes-preserve-unknown-fields']) {
    node.additionalProperties = false;
  }
  for (const k of Object.keys(node)) prepare(node[k]);
  return node;
}

function makeAjv(useDefaults) {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 });
  ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
  ajv.addFormat('int-or-string', true);
  ajv.addFormat('double', true);
  ajv.addFormat('byte', { type: 'string', validate: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) });
  return ajv;
}

function loadValidators() {
  const ajv = makeAjv(false);
  const batch = prepare(readJson(path.join(schemaDir, 'kubernetes-v1.32', 'apis__batch__v1_openapi.json')));
  const core = prepare(readJson(path.join(schemaDir, 'kubernetes-v1.32', 'api__v1_openapi.json')));
  // The documents are OpenAPI, not schemas: register only their components.
  ajv.addSchema({ $id: 'batch.json', components: batch.components });
  ajv.addSchema({ $id: 'core.json', components: core.components });
  const ref = (doc, name) => ajv.compile({ $ref: `${doc}#/components/schemas/${name}` });

  const crdDoc = yaml.load(fs.readFileSync(path.join(schemaDir, 'kuberay-v1.7.0', 'ray.io_rayjobs.yaml'), 'utf8'));
  const v1 = crdDoc.spec.versions.find((v) => v.name === 'v1');
  const rayjobSchema = prepare(JSON.parse(JSON.stringify(v1.schema.openAPIV3Schema)));
  const ajvCrd = makeAjv(true);
  const rayjob = ajvCrd.compile(rayjobSchema);

  return {
    Job: { apiVersion: 'batch/v1', validate: ref('batch.json', 'io.k8s.api.batch.v1.Job') },
    Service: { apiVersion: 'v1', validate: ref('core.json', 'io.k8s.api.core.v1.Service') },
    RayJob: { apiVersion: 'ray.io/v1', validate: rayjob, crd: true },
    objectMeta: ref('core.json', 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'),
  };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function labelKeyOk(k) {
  const i = k.lastIndexOf('/');
  const name = i < 0 ? k : k.slice(i + 1);
  const prefix = i < 0 ? null : k.slice(0, i);
  if (!name || name.length > 63 || !LABEL_NAME.test(name)) return false;
  return prefix === null || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix));
}

function checkMeta(meta, kind, errs) {
  if (!meta || !meta.name) return errs.push('metadata.name is required');
  const max = kind === 'RayJob' ? 47 : 63;
  const re = kind === 'Service' ? DNS_1035 : DNS_LABEL;
  if (meta.name.length > max || !re.test(meta.name)) errs.push(`metadata.name "${meta.name}" is not a valid ${kind} name (<= ${max})`);
  if (!meta.namespace || !DNS_LABEL.test(meta.namespace)) errs.push('metadata.namespace must be a DNS-1123 label');
  for (const [k, v] of Object.entries(meta.labels || {})) {
    if (!labelKeyOk(k)) errs.push(`label key "${k}" is invalid`);
    if (typeof v !== 'string' || (v !== '' && (v.length > 63 || !LABEL_NAME.test(v)))) errs.push(`label ${k}="${v}" has an invalid value`);
  }
  for (const k of Object.keys(meta.annotations || {})) {
    if (!labelKeyOk(k)) errs.push(`annotation key "${k}" is invalid`);
  }
  const annBytes = Object.entries(meta.annotations || {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  if (annBytes > 256 * 1024) errs.push('annotations exceed 256 KiB');
}

function checkPod(pod, where, errs) {
  if (!pod || !Array.isArray(pod.containers)) return errs.push(`${where}: containers missing`);
  const vols = new Set();
  for (const v of pod.volumes || []) {
    if (vols.has(v.name)) errs.push(`${where}: volume ${v.name} defined twice`);
    vols.add(v.name);
  }
  const names = new Set();
  for (const c of [...(pod.initContainers || []), ...pod.containers]) {
    const w = `${where}.containers[${c.name}]`;
    if (names.has(c.name)) errs.push(`${w}: container name used twice`);
    names.add(c.name);
    if (!DNS_LABEL.test(c.name || '')) errs.push(`${w}: invalid container name`);
    const envs = new Set();
    for (const e of c.env || []) {
      if (!C_IDENTIFIER.test(e.name)) errs.push(`${w}: env name ${e.name} is not a C identifier`);
      if (envs.has(e.name)) errs.push(`${w}: env ${e.name} set twice`);
      envs.add(e.name);
      if (e.value !== undefined && Buffer.byteLength(e.name + '=' + e.value) >= 131072) errs.push(`${w}: env ${e.name} exceeds the 128 KiB exec limit`);
    }
    const mounts = new Set();
    for (const m of c.volumeMounts || []) {
      if (!vols.has(m.name)) errs.push(`${w}: mount of unknown volume ${m.name}`);
      if (mounts.has(m.mountPath)) errs.push(`${w}: ${m.mountPath} mounted twice`);
      mounts.add(m.mountPath);
    }
    const req = (c.resources && c.resources.requests) || {};
    const lim = (c.resources && c.resources.limits) || {};
    for (const r of new Set([...Object.keys(req), ...Object.keys(lim)])) {
      const ext = !['cpu', 'memory', 'ephemeral-storage'].includes(r) && !r.startsWith('hugepages-');
      if (ext && String(req[r]) !== String(lim[r])) errs.push(`${w}: extended resource ${r} must have requests == limits`);
    }
  }
}

function checkKueue(m, errs) {
  const labels = (m.metadata && m.metadata.labels) || {};
  const q = labels['kueue.x-k8s.io/queue-name'];
  if (!q || !DNS_LABEL.test(q)) errs.push('kueue.x-k8s.io/queue-name label missing or invalid');
  if (m.spec.suspend !== true) errs.push('spec.suspend must be true (Kueue admits the workload)');
}

function checkOne(v, m) {
  const errs = [];
  if (!m || typeof m !== 'object') return ['not an object'];
  const entry = v[m.kind];
  if (!entry) return [`unsupported kind ${m.kind}`];
  if (m.apiVersion !== entry.apiVersion) errs.push(`apiVersion ${m.apiVersion}, want ${entry.apiVersion}`);
  const doc = JSON.parse(JSON.stringify(m));
  if (!entry.validate(doc)) {
    for (const e of entry.validate.errors) errs.push(`schema: ${e.instancePath || '/'} ${e.message}${e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : ''}`);
  }
  if (entry.crd && !v.objectMeta(JSON.parse(JSON.stringify(m.metadata || {})))) {
    for (const e of v.objectMeta.errors) errs.push(`metadata: ${e.instancePath || '/'} ${e.message}`);
  }
  checkMeta(m.metadata, m.kind, errs);
  if (m.kind === 'Job') {
    checkKueue(m, errs);
    const pod = m.spec && m.spec.template && m.spec.template.spec;
    checkPod(pod, 'spec.template.spec', errs);
    if (pod && !['Never', 'OnFailure'].includes(pod.restartPolicy)) errs.push('Job pods need restartPolicy Never or OnFailure');
  } else if (m.kind === 'RayJob') {
    checkKueue(m, errs);
    const s = m.spec || {};
    if (s.shutdownAfterJobFinishes !== true) errs.push('a kueue managed job should delete the cluster after finishing');
    if (s.clusterSelector) errs.push('a kueue managed job should not use an existing cluster');
    if (!s.rayClusterSpec) errs.push('rayClusterSpec is required');
    const rc = s.rayClusterSpec || {};
    if (rc.enableInTreeAutoscaling) errs.push('enableInTreeAutoscaling is not allowed under Kueue');
    const groups = rc.workerGroupSpecs || [];
    if (groups.length > 7) errs.push('at most 7 worker groups');
    const seen = new Set();
    for (const g of groups) {
      if (g.groupName === 'head') errs.push('a worker group may not be named head');
      if (seen.has(g.groupName)) errs.push(`worker group ${g.groupName} twice`);
      seen.add(g.groupName);
      if (!DNS_LABEL.test(g.groupName) || g.groupName.length > 63) errs.push(`worker group name ${g.groupName} is not a DNS label`);
      checkPod(g.template && g.template.spec, `workerGroupSpecs[${g.groupName}]`, errs);
    }
    checkPod(rc.headGroupSpec && rc.headGroupSpec.template && rc.headGroupSpec.template.spec, 'headGroupSpec', errs);
    if (s.runtimeEnvYAML !== undefined) {
      try { yaml.load(s.runtimeEnvYAML); } catch (e) { errs.push(`runtimeEnvYAML is not YAML: ${e.message}`); }
    }
  }
  return errs;
}

function main(argv) {
  if (argv.length === 0) {
    console.error('usage: validate-manifests.js FILE...');
    return 2;
  }
  let v;
  try {
    v = loadValidators();
  } catch (e) {
    console.error(`cannot load schemas from ${schemaDir}: ${e.message}`);
    return 2;
  }
  let bad = 0, total = 0;
  for (const file of argv) {
    let doc;
    try {
      doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      console.error(`FAIL ${file}: ${e.message}`);
      bad++;
      continue;
    }
    for (const m of Array.isArray(doc) ? doc : [doc]) {
      total++;
      const id = `${file}: ${m && m.kind}/${m && m.metadata && m.metadata.name}`;
      const errs = checkOne(v, m);
      if (errs.length) {
        bad++;
        console.error(`FAIL ${id}`);
        for (const e of errs) console.error(`  ${e}`);
      } else {
        console.log(`ok   ${id}`);
      }
    }
  }
  console.log(`${total - bad}/${total} manifests valid`);
  return bad ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
