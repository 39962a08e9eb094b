// A use case declining what it was asked, having changed nothing: the base of every feature's
// refusal error, with a stable code (scripts and callers match it; never derived from a class
// name). The operator CLI ends any refusal alike (src/admin/errors.ts), whichever feature raised it.
export class Refusal<Code extends string = string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'Refusal';
    this.code = code;
  }
}
