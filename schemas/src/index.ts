/**
 * @opco-proxy/schemas: the JSON Schemas of json/ as the single source of the service's types
 * (generated), of request and response validation, and of the OpenAPI document at /doc.
 */
export {
  validate,
  validateRequest,
  validateAssembled,
  isBase64,
  isDateOrTimestamp,
  type ValidationResult,
} from './validation.js';
export { removeOptionalNulls } from './optional-nulls.js';
export {
  schemaIds,
  allSchemaIds,
  isSchemaId,
  loadSchema,
  readSchemaShape,
  schemaUri,
  SCHEMA_BASE,
  type SchemaId,
  type JsonSchema,
  type SchemaShape,
} from './catalog.js';
export {
  operations,
  operationIds,
  isOperationId,
  operation,
  routerPath,
  findOperation,
  profileRoutes,
  operationOfRoute,
  type ProfileRoute,
  type Operations,
  type OperationId,
  type OperationSpec,
  type ResponseSpec,
  type MediaType,
  type HttpMethod,
  type RouteTag,
  type ErrorStatus,
} from './route-manifest.js';
export type * from './operation-types.js';
export { ERROR_CODES, errorCodes, errorCodeSpec, type ErrorCode, type ErrorCodeSpec } from './error-codes.js';
export { buildOpenApi, API_VERSION, type OpenApiDocument } from './openapi.js';
export { operationExamples, errorExamples, otherErrorExample, type OperationExample } from './route-examples.js';
export {
  notificationExamples,
  notificationHeaderExamples,
  EXAMPLE_SECRET,
  EXAMPLE_SIGNING_SECRET,
  type NotificationHeaderExample,
} from './event-examples.js';
export type * from './generated/types.js';
