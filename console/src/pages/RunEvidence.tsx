// The run's record: the spec as submitted, the resolved config and the
// manifests; the sealed evidence verified here with WebCrypto; the events
// with their hash chain recomputed.
import { useEffect, useState } from 'preact/hooks';
import { api, ok, rawFetch } from '../api/client';
import { ApiError } from '../api/problem';
import { useFetch } from '../lib/data';
import { parseExact, checkChain, verifyEvidence, type ChainResult, type EvidenceCheck, type JVal } from '../lib/canonical';
import { ProblemView, Loading, Section, CopyButton, Time, StateBadge } from '../ui/common';
import type { RunDetail, EvidenceSealed, EvidencePreview, RunEvent } from '../api/types';

type Evidence = EvidenceSealed | EvidencePreview;

function useEvidence(run: RunDetail) {
  return useFetch(async (signal) => {
    const res = await rawFetch(`/v1/runs/${run.id}/evidence`, { signal });
    const text = await res.text();
    return { text, ev: JSON.parse(text) as Evidence };
  }, [run.id, run.state]);
}

function pretty(v: unknown): string {
  return JSON.stringify(v, null, 2);
}

function Block({ title, text, name }: { title: string; text: string; name: string }) {
  const url = () => URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  return (
    <Section
      title={title}
      actions={
        <span class="actions">
          <CopyButton text={text} label={`Copy ${title.toLowerCase()}`} />
          <button
            type="button"
            class="small"
            onClick={() => {
              const a = document.createElement('a');
              a.href = url();
              a.download = name;
              a.click();
            }}
          >
            Download
          </button>
        </span>
      }
    >
      <pre class="code" tabIndex={0}>
        {text}
      </pre>
    </Section>
  );
}

export function SpecTab({ run }: { run: RunDetail }) {
  const e = useEvidence(run);
  if (e.error?.status === 409) return <p>The submitted spec, resolved config and manifests are shown from the run's record once it ends.</p>;
  if (e.error) return <ProblemView error={e.error} />;
  if (!e.data) return <Loading what="the spec" />;
  const rec = e.data.ev.record as { spec?: { text?: string }; config?: { resolved?: unknown; provenance?: unknown }; manifests?: unknown };
  return (
    <>
      <Block title="Submitted tau.yaml" text={rec.spec?.text ?? '(not recorded)'} name="tau.yaml" />
      <Block title="Resolved config" text={pretty(rec.config?.resolved ?? null)} name="resolved.json" />
      <Block title="Provenance" text={pretty(rec.config?.provenance ?? null)} name="provenance.json" />
      <Block title="Manifests" text={pretty(rec.manifests ?? [])} name="manifests.json" />
    </>
  );
}

function Verdict({ ok: good, yes, no }: { ok: boolean; yes: string; no: string }) {
  return <span class={good ? 'verdict good' : 'verdict bad'}>{good ? `✓ ${yes}` : `✗ ${no}`}</span>;
}

export function EvidenceTab({ run }: { run: RunDetail }) {
  const e = useEvidence(run);
  const key = useFetch((signal) => ok(api.GET('/v1/evidence/public-key', { signal })), []);
  const [check, setCheck] = useState<EvidenceCheck | null>(null);
  useEffect(() => {
    setCheck(null);
    const ev = e.data?.ev;
    if (!ev || !ev.sealed || !key.data) return;
    void verifyEvidence(ev, key.data).then(setCheck);
  }, [e.data, key.data]);
  if (e.error?.status === 409) return <p>The run has not ended yet; its evidence is sealed once it does.</p>;
  if (e.error || key.error) return <ProblemView error={e.error ?? key.error} />;
  if (!e.data) return <Loading what="the evidence" />;
  const ev = e.data.ev;
  if (!ev.sealed)
    return (
      <Section title="Not sealed yet">
        <p>{ev.detail}</p>
        <Block title="Preview of the record" text={pretty(ev.record)} name={`evidence-preview-${run.id}.json`} />
      </Section>
    );
  return (
    <>
      <Section title="Sealed evidence">
        <p class="big" role="status" aria-live="polite">
          {check ? <Verdict ok={check.verified} yes={`Verified with key ${ev.key_id}`} no="Not verified" /> : 'Verifying…'}
        </p>
        {check ? (
          <ul class="plain">
            <li>
              <Verdict ok={check.digest} yes="sha256 matches the record" no="sha256 does not match the record" />
            </li>
            <li>
              <Verdict ok={check.signature} yes="Ed25519 signature is valid" no="Ed25519 signature is not valid" />
            </li>
            <li>
              <Verdict ok={check.keyMatches} yes="signed with the gateway's key" no="signed with another key" />
            </li>
            <li>
              <Verdict ok={check.chain?.ok ?? false} yes={`history: ${check.chain?.events ?? 0} events form an intact chain`} no={`history chain broken${check.chain?.brokenAt ? ` at event ${check.chain.brokenAt}` : ''}`} />
            </li>
            {check.why && !check.verified ? <li>{check.why}</li> : null}
          </ul>
        ) : null}
        <dl class="facts">
          <dt>Sealed</dt>
          <dd>
            <Time at={ev.sealed_at} />
          </dd>
          <dt>Algorithm</dt>
          <dd>{ev.algorithm}</dd>
          <dt>sha256</dt>
          <dd>
            <code class="wrap">{ev.sha256}</code>
          </dd>
        </dl>
      </Section>
      <Block title="Canonical record" text={ev.canonical} name={`evidence-${run.id}.json`} />
    </>
  );
}

export function EventsTab({ run }: { run: RunDetail }) {
  const r = useFetch(
    async (signal) => {
      const all: JVal[] = [];
      let after = 0;
      for (;;) {
        const res = await rawFetch(`/v1/runs/${run.id}/events?after=${after}`, { signal });
        const page = parseExact(await res.text()) as { items: JVal[] };
        all.push(...page.items);
        if (page.items.length < 1000) break;
        const lastEv = page.items[page.items.length - 1] as { seq: { lex: string } };
        after = Number(lastEv.seq.lex);
      }
      const chain: ChainResult = await checkChain(run.id, all);
      return { events: JSON.parse(JSON.stringify(all, (_k, v: unknown) => (v && typeof v === 'object' && 'lex' in v ? Number((v as { lex: string }).lex) : v))) as RunEvent[], chain };
    },
    [run.id, run.state, run.attempt],
  );
  if (r.error) return <ProblemView error={r.error instanceof ApiError ? r.error : undefined} />;
  if (!r.data) return <Loading what="events" />;
  const { events, chain } = r.data;
  return (
    <>
      <p class="big" role="status">
        {chain.ok ? <Verdict ok yes={`Chain intact: ${chain.events} events`} no="" /> : <Verdict ok={false} yes="" no={`Chain broken at event ${chain.brokenAt}`} />}
      </p>
      <div class="table-wrap">
        <table class="data">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">At</th>
              <th scope="col">State</th>
              <th scope="col">Reason</th>
              <th scope="col">Source</th>
              <th scope="col">Message</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {events.map((ev) => (
              <tr key={ev.seq} class={!chain.ok && chain.brokenAt === ev.seq ? 'broken' : undefined}>
                <td>{ev.seq}</td>
                <td>
                  <Time at={ev.at} />
                </td>
                <td>{ev.state ? <StateBadge state={ev.state} /> : ''}</td>
                <td>{ev.reason ?? ''}</td>
                <td>{ev.source}</td>
                <td>{ev.message ?? ''}</td>
                <td>
                  <code class="wrap small">{Object.keys(ev.data ?? {}).length ? JSON.stringify(ev.data) : ''}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
