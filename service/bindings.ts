/**
 * The root export of `adxkit`: the bindings, as they were before they became a package of
 * their own (`import { validateBidRequest, Platform, iab } from "adxkit"` keeps working).
 * Another service that only validates installs `@adxkit/bindings` alone.
 */
export * from "@adxkit/bindings";
export * from "@adxkit/bindings/client";
export * from "@adxkit/bindings/fastify";
