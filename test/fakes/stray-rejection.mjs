// Preloaded into a gateway process (NODE_OPTIONS=--import) by a test: on SIGUSR2 it leaves a
// promise rejected with nobody listening, as a bug in one request's code would.
process.on("SIGUSR2", () => {
  Promise.reject(new Error("stray rejection from the test"));
});
