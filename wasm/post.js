// Appended to the Emscripten glue (inside its module function), for web/src/runtime.js and
// web/src/loader.js. (Emscripten 3.1.6 does not preprocess --post-js: no #if here.)
// The current memory buffer: with pthreads it is a SharedArrayBuffer that a worker may
// grow, after which the glue's HEAPU8 on this thread still views the old one.
Module['gradrtBuffer'] = function() { return wasmMemory.buffer; };
if (typeof PThread != 'undefined') {
  // Node: the pool's worker_threads must not keep the process alive (they sleep between runs).
  Module['gradrtUnrefWorkers'] = function() {
    PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function(w) { if (w.unref) w.unref(); });
  };
  // Ends every worker (the runtime is unusable afterwards).
  Module['gradrtTerminate'] = function() { PThread.terminateAllThreads(); };
}
