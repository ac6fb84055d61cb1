#!/usr/bin/env node
// Validate what the gateway renders for a run (Job, RayJob, Service) against
// the real schemas (see k8s-schemas.js), and on top of them what admission
// adds and the schemas cannot say: names and label syntax, extended
// resources requested == limited, env and volume consistency, Kueue's Job
// and RayJob webhook rules.
//
// Usage: node validate-manifests.js FILE...   (each a manifest or an array)
// Exit status 0 when every manifest is valid; 1 otherwise, with reasons.
'use strict';

const fs = require('fs');
const yaml = require('js-yaml');
const { schemaErrors, checkLabels, runValidator, DNS_LABEL, DNS_1035 } = require('./k8s-schemas');

const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkMeta(meta, kind, errs) {
  if (!meta || !meta.name) return errs.push('metadata.name is required');
  const max = kind === 'RayJob' ? 47 : 63;
  const re = kind === 'Service' ? DNS_1035 : DNS_LABEL;
  if (meta.name.length > max || !re.test(meta.name)) errs.push(`metadata.name "${meta.name}" is not a valid ${kind} name (<= ${max})`);
  if (!meta.namespace || !DNS_LABEL.test(meta.namespace)) errs.push('metadata.namespace must be a DNS-1123 label');
  checkLabels(meta, errs);
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

const RENDERED = { Job: 'batch/v1', Service: 'v1', RayJob: 'ray.io/v1' };

function checkOne(v, m) {
  if (!RENDERED[m.kind]) return [`unsupported kind ${m.kind}`];
  if (m.apiVersion !== RENDERED[m.kind]) return [`apiVersion ${m.apiVersion}, want ${RENDERED[m.kind]}`];
  const errs = schemaErrors(v, v.get(`${m.apiVersion}/${m.kind}`), m);
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

// Each FILE holds one rendered manifest or an array of them, as JSON.
function readObjects(file) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  return Array.isArray(doc) ? doc : [doc];
}

process.exitCode = runValidator(process.argv.slice(2), 'validate-manifests.js', 'manifests', readObjects, checkOne);
