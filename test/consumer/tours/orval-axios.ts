/**
 * The request function orval's generated functions call (its `override.mutator` option): axios' global
 * instance, answering the whole response as orval's default client does. orval 7 writes its default client as
 * `<TData = AxiosResponse<T>>(…): Promise<TData> => axios.get(…)`, which axios 1.21's typings no longer let
 * compile (`AxiosResponse<any>` is not assignable to `TData`: 41 type errors in the generated file; orval 8
 * writes `Promise<AxiosResponse<T>>`, but needs Node 22). With this mutator the generated code is typed by the
 * response schema and compiles.
 */
import axios, { type AxiosRequestConfig, type AxiosResponse } from 'axios';

export const orvalAxios = <T>(config: AxiosRequestConfig, options?: AxiosRequestConfig): Promise<AxiosResponse<T>> =>
  axios({ ...config, ...options });
