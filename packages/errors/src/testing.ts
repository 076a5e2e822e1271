// Test helpers for the packages that throw dsv4-kv errors; not for production code.

/**
 * The error `run` throws, checked to be of the class whose `isInstance` is given (e.g. `PlannerError`); throws a
 * plain Error naming what happened instead when `run` returns or throws something else.
 */
export function thrownError<E>(
  run: () => unknown,
  errorClass: { isInstance(error: unknown): boolean; prototype: E },
): E {
  let thrown: unknown;
  try {
    run();
  } catch (e) {
    thrown = e;
  }
  if (errorClass.isInstance(thrown)) return thrown as E;
  throw new Error(thrown === undefined ? "expected a throw, none came" : `unexpected error: ${String(thrown)}`);
}
