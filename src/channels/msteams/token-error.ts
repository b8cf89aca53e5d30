/** A token endpoint refusal or outage; `status` 0 means the network. Free of the SDK so the channel can load without it. */
export class TeamsTokenError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "TeamsTokenError";
  }
}
