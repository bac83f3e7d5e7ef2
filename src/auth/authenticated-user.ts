/** Who a request's credential names (`req.user`, and a typed handler's `user`): set by src/auth/authenticate.ts, never from the body. */
export interface AuthenticatedUser {
  id: number;
  username: string;
  isAdmin: boolean;
}
