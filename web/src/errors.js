// GradrtError: every failure of the package, with TensorFlow's status code name in .code.

export const CODES = Object.freeze([
  'OK', 'InvalidArgument', 'ResourceExhausted', 'Unimplemented', 'NotFound', 'Unavailable', 'Internal',
]);

export class GradrtError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'GradrtError';
    this.code = code;
  }
}

export function invalid(message) {
  return new GradrtError('InvalidArgument', message);
}
