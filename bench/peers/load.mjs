// Imports a peer package from bench/peers/node_modules: a dynamic import resolves from the
// importing file's folder, and this file lives next to that node_modules.
export function load(name) {
  return import(name);
}
