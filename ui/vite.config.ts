import { svelte } from '@sveltejs/vite-plugin-svelte'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  plugins: [svelte()],
  // Tauri serves the built files itself; a fixed dev port matches tauri.conf.json's devUrl.
  server: { port: 5173, strictPort: true },
  clearScreen: false,
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    // The stylesheet is read as text by one test (its two dark blocks must agree); others get
    // no CSS, as before.
    css: { include: [/app\.css/] },
  },
})
