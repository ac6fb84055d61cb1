// The console's build: hashed files under dist/assets, served by the gateway
// under /ui/ (gateway/api/console.c). No inline script or style is emitted,
// so the gateway's CSP needs no 'unsafe-inline'.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0, // data: URLs would need a wider CSP; keep every asset a file
    modulePreload: { polyfill: false }, // Chromium, Firefox and Safari preload modules natively
    reportCompressedSize: false,
    sourcemap: false,
  },
  server: {
    // `npm run dev`: the page on Vite's server, the API on a local gateway.
    proxy: { '/v1': process.env.TAUGATE_URL ?? 'http://127.0.0.1:8080' },
  },
});
