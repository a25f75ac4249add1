/**
 * generated — do not edit. Source: drivers/mongodb/config.schema.json; regenerate with
 * `npm run generate -w @opco-proxy/server`.
 */
/**
 * store: {type: "mongodb"}: MongoDB, or FerretDB (D3).
 */
export interface MongoStoreConfig {
  /**
   * mongodb:// or mongodb+srv:// URL (OPCO_PROXY_STORE_URL overrides). Its query options win over the driver's defaults: w=majority, retryWrites=true, retryReads=true, readPreference=primary (P18), serverSelectionTimeoutMS and connectTimeoutMS 5000, socketTimeoutMS 30000.
   */
  url: string;
  /**
   * Database name; default the URL's.
   */
  database?: string;
}

/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */
export const CONFIG_SCHEMA: { [keyword: string]: unknown } = {
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$id": "https://opco-proxy.example/schemas/config/store-mongodb.schema.json",
  "title": "MongoStoreConfig",
  "description": "store: {type: \"mongodb\"}: MongoDB, or FerretDB (D3).",
  "type": "object",
  "required": [
    "url"
  ],
  "properties": {
    "url": {
      "type": "string",
      "pattern": "^mongodb(\\+srv)?://",
      "description": "mongodb:// or mongodb+srv:// URL (OPCO_PROXY_STORE_URL overrides). Its query options win over the driver's defaults: w=majority, retryWrites=true, retryReads=true, readPreference=primary (P18), serverSelectionTimeoutMS and connectTimeoutMS 5000, socketTimeoutMS 30000."
    },
    "database": {
      "type": "string",
      "minLength": 1,
      "description": "Database name; default the URL's."
    }
  }
};
