'use strict';
// Koffi runs C calls on stacks of its own: 1 MiB for synchronous calls and
// 128 KiB for asynchronous ones by default. LibTorch inside cadenza's plugins
// needs the stack of an ordinary thread, so both are raised to 8 MiB; koffi
// accepts that only before it loads its first library.

const koffi = require('koffi');
const { CadenzaError, StatusCode } = require('./errors');

const STACK_BYTES = 8 << 20;
let checked = false;

function ensureStacks() {
  if (checked) return;
  const config = koffi.config();
  if (config.sync_stack_size < STACK_BYTES || config.async_stack_size < STACK_BYTES) {
    try {
      koffi.config({
        ...config,
        sync_stack_size: Math.max(config.sync_stack_size, STACK_BYTES),
        async_stack_size: Math.max(config.async_stack_size, STACK_BYTES),
      });
    } catch (error) {
      throw new CadenzaError(StatusCode.UNSUPPORTED,
        `koffi's call stacks are ${config.sync_stack_size >> 10} KiB (synchronous) and ${config.async_stack_size >> 10} KiB ` +
        `(asynchronous), and it has loaded a library already, so they cannot grow to the ${STACK_BYTES >> 20} MiB cadenza ` +
        `needs: load cadenza before other libraries, or call koffi.config() with sync_stack_size and async_stack_size ` +
        `of ${STACK_BYTES} first (${error.message})`);
    }
  }
  checked = true;
}

module.exports = { ensureStacks };
