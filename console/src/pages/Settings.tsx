// Display settings and what this console talks to.
import { api, ok } from '../api/client';
import { useFetch } from '../lib/data';
import { theme, zone } from '../state/prefs';
import { Section } from '../ui/common';

export function Settings() {
  const v = useFetch((signal) => ok(api.GET('/v1/version', { signal })), []);
  return (
    <div class="page">
      <h1>Settings</h1>
      <Section title="Display">
        <form class="row-form" onSubmit={(e) => e.preventDefault()}>
          <label>
            Theme
            <select value={theme.value} onChange={(e) => (theme.value = (e.target as HTMLSelectElement).value as 'light' | 'dark' | 'system')}>
              <option value="system">as the system</option>
              <option value="light">light</option>
              <option value="dark">dark</option>
            </select>
          </label>
          <label>
            Times
            <select value={zone.value} onChange={(e) => (zone.value = (e.target as HTMLSelectElement).value as 'local' | 'utc')}>
              <option value="local">local time</option>
              <option value="utc">UTC</option>
            </select>
          </label>
        </form>
      </Section>
      <Section title="About">
        <p>
          Gateway version <code>{v.data ? JSON.stringify(v.data) : '…'}</code>. The REST contract: <a href="/v1/openapi.yaml">/v1/openapi.yaml</a>.
        </p>
      </Section>
    </div>
  );
}
