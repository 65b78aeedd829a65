// Changes to TF.js's global kernel and gradient registries, undone exactly by restore().
//
// The registries are Maps keyed by '<backend>_<kernel>' and '<kernel>'. Map.set on an
// existing key keeps its position, so replacing a config in place (registerKernel /
// registerGradient over the old one) and later putting the old object back leaves
// getKernelsForBackend()'s order untouched; a key we added is deleted again.

function quietly(fn) {
  // registerKernel over an existing key logs "already registered" through console.warn
  // (unless tfjs's PROD / IS_TEST flag is set): that replacement is the point here.
  const warn = console.warn;
  console.warn = (...args) => {
    if (typeof args[0] === 'string' && args[0].includes('is already registered')) return;
    warn.apply(console, args);
  };
  try {
    return fn();
  } finally {
    console.warn = warn;
  }
}

export class Registration {
  #tf;
  #undo = []; // closures, applied in reverse order
  #restored = false;

  constructor(tf) {
    this.#tf = tf;
  }

  // Installs config (a full KernelConfig) and returns the one it replaces (or undefined).
  kernel(config) {
    const tf = this.#tf;
    const { kernelName, backendName } = config;
    const previous = tf.getKernel(kernelName, backendName);
    quietly(() => tf.registerKernel(config));
    this.#undo.push(() => {
      // Only undo our own entry: someone may have registered over it since.
      if (tf.getKernel(kernelName, backendName) !== config) return;
      if (previous) quietly(() => tf.registerKernel(previous));
      else tf.unregisterKernel(kernelName, backendName);
    });
    return previous;
  }

  // Installs a gradient config and returns the one it replaces (or undefined).
  gradient(config) {
    const tf = this.#tf;
    const { kernelName } = config;
    const previous = tf.getGradient(kernelName);
    tf.registerGradient(config);
    this.#undo.push(() => {
      if (tf.getGradient(kernelName) !== config) return;
      if (previous) tf.registerGradient(previous);
      else tf.unregisterGradient(kernelName);
    });
    return previous;
  }

  get restored() {
    return this.#restored;
  }

  // Puts every replaced config back, newest change first. Idempotent.
  restore() {
    if (this.#restored) return;
    this.#restored = true;
    for (let i = this.#undo.length - 1; i >= 0; i--) this.#undo[i]();
    this.#undo = [];
  }
}
