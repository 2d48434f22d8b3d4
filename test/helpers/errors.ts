/**
 * The error a call throws, asserted to be of one class (LogtoolError's subclasses: InternalError,
 * InvalidArgumentError …); a call that returns fails the test.
 */
import { expect } from 'vitest';

export function thrown<E extends Error>(fn: () => unknown, errorClass: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(errorClass);
    return e as E;
  }
  throw new Error(`expected a ${errorClass.name}`);
}

/** Like thrown(), for a call that throws or returns a promise that rejects. */
export async function rejected<E extends Error>(fn: () => unknown, errorClass: abstract new (...args: never[]) => E): Promise<E> {
  let result: unknown;
  try {
    result = await fn();
  } catch (e) {
    return thrown(() => {
      throw e;
    }, errorClass);
  }
  throw new Error(`expected a ${errorClass.name}, got ${String(result)}`);
}
