/**
 * @opco-proxy/schemas: the JSON Schemas of json/ as the single source of the service's types
 * (generated), of request and response validation, and of the OpenAPI document at /doc.
 */
export { validate, isBase64, type ValidationResult } from './validation.js';
export { schemaIds, allSchemaIds, isSchemaId, loadSchema, schemaUri, SCHEMA_BASE, type SchemaId, type JsonSchema } from './catalog.js';
export {
  routeTable,
  routerPath,
  findRoute,
  type ServiceRoute,
  type RouteResponse,
  type HttpMethod,
  type RouteTag,
  type ErrorStatus,
} from './routes.js';
export { buildOpenApi, API_VERSION, type OpenApiDocument } from './openapi.js';
export type * from './generated/types.js';
