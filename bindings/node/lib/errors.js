'use strict';
// Status codes of cadenza/status.h and the one error every failing call throws.

const StatusCode = Object.freeze({
  OK: 0,
  INVALID_ARGUMENT: 1,
  INVALID_CONFIG: 2,
  NOT_FOUND: 3,
  IO_ERROR: 4,
  ABI_MISMATCH: 5,
  UNSUPPORTED: 6,
  CANCELLED: 7,
  OUT_OF_MEMORY: 8,
  INTERNAL: 9,
  BUSY: 10,
});

const codeNames = Object.fromEntries(Object.entries(StatusCode).map(([name, code]) => [code, name]));

// A failed call: `code` is the numeric status, `status` its name, `message`
// the library's text (a pipeline file's errors as "file:line:column: message").
class CadenzaError extends Error {
  constructor(code, message) {
    const known = Object.prototype.hasOwnProperty.call(codeNames, code);
    super(message);
    this.name = 'CadenzaError';
    this.code = known ? code : StatusCode.INTERNAL;
    this.status = codeNames[this.code];
  }
}

function invalidArgument(message) {
  return new CadenzaError(StatusCode.INVALID_ARGUMENT, message);
}

module.exports = { CadenzaError, StatusCode, invalidArgument };
