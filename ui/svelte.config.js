/** @type {import("@sveltejs/vite-plugin-svelte").SvelteConfig} */
export default {}
