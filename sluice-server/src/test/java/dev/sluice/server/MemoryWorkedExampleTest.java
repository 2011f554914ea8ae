package dev.sluice.server;

/** docs/policies.md's worked example on the memory store. */
class MemoryWorkedExampleTest extends AbstractWorkedExampleTest {
  @Override
  String store() {
    return "memory";
  }
}
