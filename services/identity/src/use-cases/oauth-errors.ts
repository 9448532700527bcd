/** An RFC 6749 §5.2 error (token and revocation endpoints), or an authorize redirect error. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}
