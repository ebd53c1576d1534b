// Builds the floor page with the UI's own Vite and Svelte (app.sh links ui/node_modules here).
import { svelte } from '@sveltejs/vite-plugin-svelte'
import { defineConfig } from 'vite'

export default defineConfig({ root: import.meta.dirname, plugins: [svelte()], logLevel: 'warn' })
