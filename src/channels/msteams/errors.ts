/** The Teams channel's own errors, free of the SDK so the channel module loads without it. */

/** A token endpoint refusal or outage; `status` 0 means the network. */
export class TeamsTokenError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "TeamsTokenError";
  }
}

/** A send the bot will not make: the conversation's serviceUrl is not trusted with its token. Not retried. */
export class UntrustedServiceUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UntrustedServiceUrlError";
  }
}
